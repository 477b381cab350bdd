-- Wireshark dissector for roam's datagrams (the formats of crates/roam-wire/src/): the common
-- header, the TCP-like segment and its options, RCP REQ and DATA (with tokens and pull blocks),
-- RCP-ATL media packets and receiver reports, and pTCP datagrams (the pTCP header, its
-- handshake extension, and the pipe segment inside).
--
-- roam runs over UDP on any port, so the dissector is heuristic: a UDP payload whose first
-- byte is roam's version (1), whose second is a known packet type and whose flags use only
-- defined bits is taken as roam. "Decode As... > roam" works on any UDP port as well.
--
-- The Info column is the simulator's one-line summary of the datagram (roam_wire::Summary, the
-- `summary` column of `roam sim --trace`), so a capture and a trace read alike;
-- crates/roam/tests/wireshark.rs checks them against each other with tshark.
--
-- Install: copy (or link) this file into Wireshark's personal plugin folder
-- (~/.local/lib/wireshark/plugins/ on Linux; Help > About Wireshark > Folders shows it), or
-- load it for one run: `tshark -X lua_script:tools/wireshark/roam.lua -r capture.pcapng`.
-- Display filters: `roam`, `roam.type == 3`, `roam.seg.seq`, `roam.req.block.id`, ...

local roam = Proto("roam", "roam transport")

local TYPES = {
  [1] = "Segment", [2] = "RCP REQ", [3] = "RCP DATA", [4] = "Media", [5] = "Media report",
  [6] = "pTCP",
}
local OPTION_KINDS = {
  [1] = "MSS", [2] = "SACK permitted", [3] = "SACK", [4] = "Probe", [5] = "Last-link report",
  [6] = "Link-info report",
}
local PROBE_KINDS = { [1] = "PROBE1", [2] = "PR1_ACK", [3] = "PROBE2", [4] = "PR2_ACK" }

local SYN, ACK, FIN, RST, ELN, TOKEN = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
local TOKEN_LEN = 18
local UNBOUNDED = "18446744073709551615"

local F = roam.fields
-- Common header (header.rs).
F.version = ProtoField.uint8("roam.version", "Version")
F.type = ProtoField.uint8("roam.type", "Packet type", base.HEX, TYPES)
F.flags = ProtoField.uint16("roam.flags", "Flags", base.HEX)
F.syn = ProtoField.bool("roam.flags.syn", "SYN", 16, nil, SYN)
F.ack = ProtoField.bool("roam.flags.ack", "ACK", 16, nil, ACK)
F.fin = ProtoField.bool("roam.flags.fin", "FIN", 16, nil, FIN)
F.rst = ProtoField.bool("roam.flags.rst", "RST", 16, nil, RST)
F.eln = ProtoField.bool("roam.flags.eln", "ELN (wireless loss)", 16, nil, ELN)
F.tok = ProtoField.bool("roam.flags.token", "TOKEN", 16, nil, TOKEN)
F.conn = ProtoField.uint64("roam.conn_id", "Connection id", base.HEX)
F.token = ProtoField.bytes("roam.token", "Address-validation token")
F.payload = ProtoField.bytes("roam.payload", "Payload")
-- Segment (segment.rs) and its options (options.rs).
F.seg_seq = ProtoField.uint64("roam.seg.seq", "Sequence")
F.seg_ack = ProtoField.uint64("roam.seg.ack", "Acknowledgement")
F.seg_win = ProtoField.uint32("roam.seg.window", "Window")
F.seg_tsval = ProtoField.uint32("roam.seg.ts_val", "Timestamp value")
F.seg_tsecr = ProtoField.uint32("roam.seg.ts_ecr", "Timestamp echo reply")
F.seg_optlen = ProtoField.uint8("roam.seg.opts_len", "Options length")
F.seg_len = ProtoField.uint32("roam.seg.len", "Payload length")
F.opt_kind = ProtoField.uint8("roam.opt.kind", "Option", base.DEC, OPTION_KINDS)
F.opt_len = ProtoField.uint8("roam.opt.len", "Option length")
F.opt_mss = ProtoField.uint16("roam.opt.mss", "MSS")
F.opt_sack_start = ProtoField.uint64("roam.opt.sack.start", "SACK block start")
F.opt_sack_end = ProtoField.uint64("roam.opt.sack.end", "SACK block end")
F.opt_probe_kind = ProtoField.uint8("roam.opt.probe.kind", "Probe", base.DEC, PROBE_KINDS)
F.opt_probe_id = ProtoField.uint32("roam.opt.probe.id", "Probe id")
F.opt_ll_bw = ProtoField.uint64("roam.opt.lastlink.bandwidth_bps", "Last-link bandwidth (b/s)")
F.opt_ll_per = ProtoField.uint32("roam.opt.lastlink.per_ppm", "Last-link PER (ppm)")
F.opt_li_pw = ProtoField.uint32("roam.opt.linkinfo.p_w_ppm", "Wireless loss p_w (ppm)")
F.opt_li_dw = ProtoField.uint32("roam.opt.linkinfo.d_w_us", "Wireless delay d_w (us)")
F.opt_li_h = ProtoField.uint16("roam.opt.linkinfo.handoffs", "Handoff count")
-- RCP REQ (request.rs).
F.req_mode = ProtoField.uint8("roam.req.mode", "Mode", base.HEX)
F.req_pull = ProtoField.bool("roam.req.mode.pull", "PULL", 8, nil, 0x01)
F.req_probe = ProtoField.bool("roam.req.mode.probe", "PROBE (persist)", 8, nil, 0x02)
F.req_nblocks = ProtoField.uint8("roam.req.nblocks", "Pull blocks")
F.req_req = ProtoField.uint64("roam.req.req", "Cumulative request (SEG.REQ)")
F.req_deq = ProtoField.uint32("roam.req.deq", "Distance to the in-order point (SEG.DEQ)")
F.req_tsval = ProtoField.uint32("roam.req.ts_val", "Timestamp value")
F.req_tsecr = ProtoField.uint32("roam.req.ts_ecr", "Timestamp echo reply")
F.req_block_id = ProtoField.uint32("roam.req.block.id", "Pull serial number")
F.req_block_start = ProtoField.uint64("roam.req.block.start", "Pull block start")
F.req_block_end = ProtoField.uint64("roam.req.block.end", "Pull block end")
F.req_name_len = ProtoField.uint8("roam.req.name_len", "Object name length")
F.req_object = ProtoField.string("roam.req.object", "Object")
-- RCP DATA (data.rs).
F.data_seq = ProtoField.uint64("roam.data.seq", "Object offset")
F.data_win = ProtoField.uint64("roam.data.window", "Window (SND.WND)")
F.data_tsval = ProtoField.uint32("roam.data.ts_val", "Timestamp value")
F.data_tsecr = ProtoField.uint32("roam.data.ts_ecr", "Timestamp echo reply")
F.data_pull = ProtoField.uint32("roam.data.pull_id", "Pull answered")
F.data_ext = ProtoField.uint8("roam.data.ext", "Extensions", base.HEX)
F.data_objlen = ProtoField.uint64("roam.data.object_len", "Object length")
F.data_len = ProtoField.uint32("roam.data.len", "Payload length")
-- RCP-ATL media packets and reports (media.rs).
F.media_seq = ProtoField.uint64("roam.media.seq", "Sequence")
F.media_time = ProtoField.uint64("roam.media.send_time_us", "Send time (us)")
F.media_rate = ProtoField.uint64("roam.media.rate_bps", "Rate (b/s)")
F.media_len = ProtoField.uint32("roam.media.len", "Payload length")
F.rep_high = ProtoField.uint64("roam.report.highest_seq", "Highest sequence")
F.rep_recv = ProtoField.uint64("roam.report.received", "Received")
F.rep_lost = ProtoField.uint64("roam.report.lost", "Lost (cumulative)")
F.rep_frac = ProtoField.uint16("roam.report.fraction_lost", "Fraction lost (/65536)")
F.rep_echo = ProtoField.uint64("roam.report.echo_time_us", "Echoed send time (us)")
F.rep_hold = ProtoField.uint32("roam.report.hold_us", "Holding time (us)")
F.rep_link = ProtoField.uint8("roam.report.link", "Link fields")
F.rep_pw = ProtoField.uint32("roam.report.p_w_ppm", "Wireless loss p_w (ppm)")
F.rep_dw = ProtoField.uint32("roam.report.d_w_us", "Wireless delay d_w (us)")
F.rep_h = ProtoField.uint16("roam.report.handoffs", "Handoff count")
-- pTCP (ptcp.rs).
F.ptcp_src = ProtoField.uint64("roam.ptcp.src", "pSRC")
F.ptcp_dst = ProtoField.uint64("roam.ptcp.dst", "pDST")
F.ptcp_seq = ProtoField.uint64("roam.ptcp.seq", "pSEQ")
F.ptcp_ack = ProtoField.uint64("roam.ptcp.ack", "pACK")
F.ptcp_ntx = ProtoField.uint8("roam.ptcp.ntx", "nTx")
F.ptcp_nrx = ProtoField.uint8("roam.ptcp.nrx", "nRx")
F.ptcp_list_len = ProtoField.uint16("roam.ptcp.list_len", "Address list length")
F.ptcp_list = ProtoField.bytes("roam.ptcp.list", "Address list")

local malformed = ProtoExpert.new("roam.malformed", "Malformed roam datagram",
  expert.group.MALFORMED, expert.severity.ERROR)
roam.experts = { malformed }

-- Raised (as a table) when a field runs past the datagram's end.
local Short = {}

-- A cursor over the datagram: reads fields in order, adding each to `tree`.
local function cursor(tvb, at)
  local c = { tvb = tvb, at = at }
  function c:take(n)
    if self.at + n > self.tvb:len() then
      error(Short)
    end
    local r = self.tvb(self.at, n)
    self.at = self.at + n
    return r
  end
  function c:add(tree, field, n)
    local r = self:take(n)
    tree:add(field, r)
    return r
  end
  function c:rest()
    return self.tvb:len() - self.at
  end
  return c
end

-- The flags as tcpdump writes them, like roam_wire::Summary: [SFREA], [-] for none.
local function flag_text(flags)
  local s = ""
  for _, p in ipairs({ { SYN, "S" }, { FIN, "F" }, { RST, "R" }, { ELN, "E" }, { ACK, "A" } }) do
    if bit.band(flags, p[1]) ~= 0 then
      s = s .. p[2]
    end
  end
  if s == "" then
    s = "-"
  end
  return "[" .. s .. "]"
end

local function u64(r)
  return tostring(r:uint64())
end

-- Options (options.rs): kind u8 | len u8 (total) | value. Returns the summary's words.
local function options(tvb, tree, at, len)
  local text = ""
  local sack = {}
  local mss, sackok, probe, lastlink, linkinfo
  local o = at
  while o + 2 <= at + len do
    local kind = tvb(o, 1):uint()
    local olen = tvb(o + 1, 1):uint()
    if olen < 2 or o + olen > at + len then
      error(Short)
    end
    local st = tree:add(tvb(o, olen), OPTION_KINDS[kind] or ("Unknown option " .. kind))
    st:add(F.opt_kind, tvb(o, 1))
    st:add(F.opt_len, tvb(o + 1, 1))
    local v = o + 2
    if kind == 1 and olen == 4 then
      st:add(F.opt_mss, tvb(v, 2))
      mss = tvb(v, 2):uint()
    elseif kind == 2 then
      sackok = true
    elseif kind == 3 then
      local b = v
      while b + 16 <= o + olen do
        st:add(F.opt_sack_start, tvb(b, 8))
        st:add(F.opt_sack_end, tvb(b + 8, 8))
        sack[#sack + 1] = u64(tvb(b, 8)) .. "-" .. u64(tvb(b + 8, 8))
        b = b + 16
      end
    elseif kind == 4 and olen == 7 then
      st:add(F.opt_probe_kind, tvb(v, 1))
      st:add(F.opt_probe_id, tvb(v + 1, 4))
      probe = (PROBE_KINDS[tvb(v, 1):uint()] or "?") .. "#" .. tvb(v + 1, 4):uint()
    elseif kind == 5 and olen == 14 then
      st:add(F.opt_ll_bw, tvb(v, 8))
      st:add(F.opt_ll_per, tvb(v + 8, 4))
      lastlink = u64(tvb(v, 8)) .. "bps/" .. tvb(v + 8, 4):uint() .. "ppm"
    elseif kind == 6 and olen == 12 then
      st:add(F.opt_li_pw, tvb(v, 4))
      st:add(F.opt_li_dw, tvb(v + 4, 4))
      st:add(F.opt_li_h, tvb(v + 8, 2))
      linkinfo = "pw" .. tvb(v, 4):uint() .. "ppm/dw" .. tvb(v + 4, 4):uint() .. "us/h"
        .. tvb(v + 8, 2):uint()
    end
    o = o + olen
  end
  -- The summary's order (summary.rs), whatever the order on the wire.
  if mss then text = text .. " mss=" .. mss end
  if sackok then text = text .. " sackok" end
  if #sack > 0 then text = text .. " sack=" .. table.concat(sack, ",") end
  if probe then text = text .. " probe=" .. probe end
  if lastlink then text = text .. " lastlink=" .. lastlink end
  if linkinfo then text = text .. " linkinfo=" .. linkinfo end
  return text
end

-- The common header (12 bytes) at `at`; returns the flags and the subtree.
local function header(tvb, tree, at)
  local c = cursor(tvb, at)
  c:add(tree, F.version, 1)
  c:add(tree, F.type, 1)
  local fr = c:take(2)
  local ft = tree:add(F.flags, fr)
  for _, f in ipairs({ F.syn, F.ack, F.fin, F.rst, F.eln, F.tok }) do
    ft:add(f, fr)
  end
  c:add(tree, F.conn, 8)
  return fr:uint()
end

-- A TCP-like segment (segment.rs) at `at` to the end; returns its summary.
local function segment(tvb, tree, at)
  local flags = header(tvb, tree, at)
  local c = cursor(tvb, at + 12)
  local seq = u64(c:add(tree, F.seg_seq, 8))
  local ack = u64(c:add(tree, F.seg_ack, 8))
  local win = c:add(tree, F.seg_win, 4):uint()
  c:add(tree, F.seg_tsval, 4)
  c:add(tree, F.seg_tsecr, 4)
  local optlen = c:add(tree, F.seg_optlen, 1):uint()
  local opts = ""
  if optlen > 0 then
    c:take(optlen)
    local ot = tree:add(tvb(c.at - optlen, optlen), "Options (" .. optlen .. " bytes)")
    opts = options(tvb, ot, c.at - optlen, optlen)
  end
  local len = c:rest()
  tree:add(F.seg_len, len):set_generated()
  if len > 0 then
    tree:add(F.payload, tvb(c.at, len))
  end
  return "seg " .. flag_text(flags) .. " seq=" .. seq .. " ack=" .. ack .. " len=" .. len
    .. " win=" .. win .. opts
end

-- RCP REQ (request.rs).
local function request(tvb, tree, flags)
  local c = cursor(tvb, 12)
  local mr = c:take(1)
  local mt = tree:add(F.req_mode, mr)
  mt:add(F.req_pull, mr)
  mt:add(F.req_probe, mr)
  local mode = mr:uint()
  local n = c:add(tree, F.req_nblocks, 1):uint()
  local req = u64(c:add(tree, F.req_req, 8))
  local deq = c:add(tree, F.req_deq, 4):uint()
  c:add(tree, F.req_tsval, 4)
  c:add(tree, F.req_tsecr, 4)
  local text = "req " .. flag_text(flags) .. " req=" .. req .. " deq=" .. deq
  if bit.band(mode, 1) ~= 0 then text = text .. " PUL" end
  if bit.band(mode, 2) ~= 0 then text = text .. " PROBE" end
  local blocks = {}
  for i = 1, n do
    local bt = tree:add(tvb(c.at, math.min(20, c:rest())), "Pull block " .. i)
    local id = c:add(bt, F.req_block_id, 4):uint()
    local s = u64(c:add(bt, F.req_block_start, 8))
    local e = u64(c:add(bt, F.req_block_end, 8))
    blocks[#blocks + 1] = "#" .. id .. ":" .. s .. "-" .. e
  end
  if #blocks > 0 then text = text .. " blocks=" .. table.concat(blocks, ",") end
  local token = bit.band(flags, TOKEN) ~= 0
  if token then c:add(tree, F.token, TOKEN_LEN) end
  if bit.band(flags, SYN) ~= 0 or token then
    local nl = c:add(tree, F.req_name_len, 1):uint()
    local name = c:take(nl)
    tree:add(F.req_object, name)
    if nl > 0 then text = text .. " object=" .. name:string() end
  end
  if token then text = text .. " token" end
  return text
end

-- RCP DATA (data.rs).
local function data(tvb, tree, flags)
  local c = cursor(tvb, 12)
  local seq = u64(c:add(tree, F.data_seq, 8))
  local wnd = u64(c:add(tree, F.data_win, 8))
  c:add(tree, F.data_tsval, 4)
  c:add(tree, F.data_tsecr, 4)
  local pull = c:add(tree, F.data_pull, 4):uint()
  local ext = c:add(tree, F.data_ext, 1):uint()
  local objlen
  if bit.band(ext, 1) ~= 0 then
    objlen = u64(c:add(tree, F.data_objlen, 8))
  end
  local token = bit.band(flags, TOKEN) ~= 0
  if token then c:add(tree, F.token, TOKEN_LEN) end
  local len = c:rest()
  tree:add(F.data_len, len):set_generated()
  if len > 0 then tree:add(F.payload, tvb(c.at, len)) end
  local text = "data " .. flag_text(flags) .. " seq=" .. seq .. " len=" .. len .. " wnd=" .. wnd
  if objlen == UNBOUNDED then
    text = text .. " objlen=unbounded"
  elseif objlen then
    text = text .. " objlen=" .. objlen
  end
  if pull ~= 0 then text = text .. " pull=#" .. pull end
  if token then text = text .. " token" end
  return text
end

-- RCP-ATL media packet (media.rs).
local function media(tvb, tree, flags)
  local c = cursor(tvb, 12)
  local seq = u64(c:add(tree, F.media_seq, 8))
  c:add(tree, F.media_time, 8)
  local rate = u64(c:add(tree, F.media_rate, 8))
  local token = bit.band(flags, TOKEN) ~= 0
  if token then c:add(tree, F.token, TOKEN_LEN) end
  local len = c:rest()
  tree:add(F.media_len, len):set_generated()
  if len > 0 then tree:add(F.payload, tvb(c.at, len)) end
  return "media seq=" .. seq .. " len=" .. len .. " rate=" .. rate .. (token and " token" or "")
end

-- RCP-ATL receiver report (media.rs).
local function report(tvb, tree, flags)
  local c = cursor(tvb, 12)
  local high = u64(c:add(tree, F.rep_high, 8))
  local recv = u64(c:add(tree, F.rep_recv, 8))
  local lost = u64(c:add(tree, F.rep_lost, 8))
  c:add(tree, F.rep_frac, 2)
  c:add(tree, F.rep_echo, 8)
  c:add(tree, F.rep_hold, 4)
  local link = c:add(tree, F.rep_link, 1):uint()
  if link == 1 then
    c:add(tree, F.rep_pw, 4)
    c:add(tree, F.rep_dw, 4)
    c:add(tree, F.rep_h, 2)
  end
  local token = bit.band(flags, TOKEN) ~= 0
  if token then c:add(tree, F.token, TOKEN_LEN) end
  return "media-report highest=" .. high .. " received=" .. recv .. " lost=" .. lost
    .. (token and " token" or "")
end

-- pTCP datagram (ptcp.rs): header, handshake extension on pSYN, then a whole pipe segment.
local function ptcp(tvb, tree, flags)
  local c = cursor(tvb, 12)
  local src = u64(c:add(tree, F.ptcp_src, 8))
  local dst = u64(c:add(tree, F.ptcp_dst, 8))
  local pseq = u64(c:add(tree, F.ptcp_seq, 8))
  local pack = u64(c:add(tree, F.ptcp_ack, 8))
  if bit.band(flags, SYN) ~= 0 then
    local ht = tree:add(tvb(c.at, math.min(4, c:rest())), "pTCP handshake (pSYN)")
    c:add(ht, F.ptcp_ntx, 1)
    c:add(ht, F.ptcp_nrx, 1)
    local n = c:add(ht, F.ptcp_list_len, 2):uint()
    c:add(ht, F.ptcp_list, n)
  end
  local st = tree:add(tvb(c.at, c:rest()), "Pipe segment")
  return "ptcp " .. src .. ">" .. dst .. " pseq=" .. pseq .. " pack=" .. pack .. " "
    .. segment(tvb, st, c.at)
end

local BODIES = { [2] = request, [3] = data, [4] = media, [5] = report, [6] = ptcp }

function roam.dissector(tvb, pinfo, tree)
  if tvb:len() < 12 then
    return 0
  end
  pinfo.cols.protocol = "roam"
  local t = tvb(1, 1):uint()
  local sub = tree:add(roam, tvb(), "roam " .. (TYPES[t] or "datagram"))
  local ok, text = pcall(function()
    if t == 1 then
      return segment(tvb, sub, 0)
    end
    local flags = header(tvb, sub, 0)
    local body = BODIES[t]
    if not body then
      error(Short)
    end
    return body(tvb, sub, flags)
  end)
  if not ok then
    if text ~= Short then
      error(text)
    end
    sub:add_proto_expert_info(malformed)
    text = (TYPES[t] or "roam") .. " (malformed)"
  end
  pinfo.cols.info = text
  sub:append_text(": " .. text)
  return tvb:len()
end

-- A roam datagram: version 1, a known packet type, only defined flag bits.
local function heuristic(tvb, pinfo, tree)
  if tvb:len() < 12 or tvb(0, 1):uint() ~= 1 then
    return false
  end
  local t = tvb(1, 1):uint()
  if t < 1 or t > 6 or bit.band(tvb(2, 2):uint(), 0xffc0) ~= 0 then
    return false
  end
  roam.dissector(tvb, pinfo, tree)
  return true
end

roam:register_heuristic("udp", heuristic)
DissectorTable.get("udp.port"):add_for_decode_as(roam)
