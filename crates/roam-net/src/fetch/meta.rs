//! The metadata phase of a download (issue 28, items 5 and 9): `.roam-meta/NAME` asked for
//! again while a server is still hashing, asked of every mirror and cross-checked (never
//! trusted from whichever answers first), then the BLAKE3 tree checked against the digest.

use std::cell::RefCell;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use roam_wire::{MetaMessage, Unavailable, META_LEN};

use super::{engine, verify, Engine, FetchPlan, Kind, Progress};
use crate::store::{ObjectMeta, META_PREFIX};
use crate::{Clock, NetError};

/// The metadata (from every server, cross-checked) and the verified tree; servers whose
/// metadata or tree disagrees are removed from `plan` and listed in `dropped`.
pub(super) async fn prepare<F: FnMut(&Progress)>(
    plan: &mut FetchPlan,
    kind: Kind,
    progress: &mut F,
    dropped: &mut Vec<(SocketAddr, String)>,
) -> Result<(ObjectMeta, verify::Tree), NetError> {
    let meta = if plan.servers.len() == 1 {
        let mut e = engine(kind, plan, &mut *progress)?;
        let m = fetch_meta(plan, &mut e).await?;
        check_pin(plan, &m)?;
        m
    } else {
        consensus(plan, kind, progress, dropped).await?
    };
    if crate::tree::groups(meta.len, meta.group_log2) < 2 {
        return Ok((meta, verify::Tree::whole(&meta)));
    }
    for s in plan.servers.clone() {
        let one = verify::one_server(plan, s);
        let mut e = engine(kind, &one, &mut *progress)?;
        match verify::fetch_tree(&one, &mut e, &meta).await {
            Ok(t) => return Ok((meta, t)),
            Err(why) if why.starts_with("the tree") => {
                tracing::warn!(server = %s, %why, "bad tree: server dropped");
                dropped.push((s, why));
                plan.servers.retain(|x| *x != s);
            }
            Err(why) => tracing::debug!(server = %s, %why, "no tree"),
        }
    }
    if plan.servers.is_empty() {
        return Err(NetError::Integrity {
            name: plan.name.clone(),
            reason: "every server's tree fails the digest".into(),
        });
    }
    // No tree to be had: the object is verified whole at the end only.
    tracing::warn!("no server gave the tree: verified whole at the end only");
    Ok((meta, verify::Tree::whole(&meta)))
}

/// Refuses metadata that disagrees with the pinned digest.
fn check_pin(plan: &FetchPlan, m: &ObjectMeta) -> Result<(), NetError> {
    match plan.expected_digest {
        Some(pin) if pin != m.digest => Err(NetError::Integrity {
            name: plan.name.clone(),
            reason: format!(
                "the server's metadata gives BLAKE3 {}, not the expected {}",
                blake3::Hash::from(m.digest).to_hex(),
                blake3::Hash::from(pin).to_hex()
            ),
        }),
        _ => Ok(()),
    }
}

/// The metadata every server gives, cross-checked (issue 28, item 9: never trusted from
/// whichever answers first): the pinned digest's if there is one, else what a strict majority
/// of the servers that answered say. Servers that say otherwise are dropped; a tie without a
/// pin is an error naming each side. Every server is asked at once, so one that does not
/// answer delays nobody else's answer; the answers are awaited until the choice is settled
/// ([`settled`]: a strict majority of *all* the servers gave it, which no later answer can
/// change) or every server answered or gave up. A server that has not answered by then is kept
/// and moved last (its bytes are verified group by group like everyone's).
async fn consensus<F: FnMut(&Progress)>(
    plan: &mut FetchPlan,
    kind: Kind,
    progress: &mut F,
    dropped: &mut Vec<(SocketAddr, String)>,
) -> Result<ObjectMeta, NetError> {
    let (answers, first_error, silent) = ask_all(plan, kind, progress).await;
    let Some(&(_, first)) = answers.first() else {
        // A refusal or an unavailable name is the servers' answer: say it as it is.
        return Err(match first_error {
            Some(NetError::Unreachable { reason, .. })
                if reason.starts_with("no answer") || reason.starts_with("no data") =>
            {
                NetError::Unreachable {
                    name: plan.name.clone(),
                    reason: format!(
                        "none of the {} servers answered (last: {reason})",
                        plan.servers.len()
                    ),
                }
            }
            Some(e) => e,
            None => NetError::Unreachable {
                name: plan.name.clone(),
                reason: "no server answered".into(),
            },
        });
    };
    let key = |m: &ObjectMeta| (m.len, m.digest);
    let chosen = match plan.expected_digest {
        Some(pin) => match answers.iter().find(|(_, m)| m.digest == pin) {
            Some(&(_, m)) => m,
            None => {
                check_pin(plan, &first)?;
                first
            }
        },
        None => {
            let votes = |m: &ObjectMeta| answers.iter().filter(|(_, x)| key(x) == key(m)).count();
            let best = answers
                .iter()
                .map(|(_, m)| *m)
                .max_by_key(votes)
                .unwrap_or(first);
            if votes(&best) * 2 <= answers.len() {
                let sides: Vec<String> = answers
                    .iter()
                    .map(|(s, m)| {
                        format!(
                            "{s} says {} bytes, BLAKE3 {}",
                            m.len,
                            blake3::Hash::from(m.digest).to_hex()
                        )
                    })
                    .collect();
                return Err(NetError::Integrity {
                    name: plan.name.clone(),
                    reason: format!(
                        "the servers disagree ({}); pin the right digest with --blake3",
                        sides.join("; ")
                    ),
                });
            }
            best
        }
    };
    for (s, m) in &answers {
        if key(m) != key(&chosen) {
            let why = format!(
                "its metadata says {} bytes, BLAKE3 {}, not {} bytes, {}",
                m.len,
                blake3::Hash::from(m.digest).to_hex(),
                chosen.len,
                blake3::Hash::from(chosen.digest).to_hex()
            );
            tracing::warn!(server = %s, %why, "server dropped");
            dropped.push((*s, why));
            plan.servers.retain(|x| x != s);
        }
    }
    // The servers that answered first: the tree is asked of them in this order.
    plan.servers.sort_by_key(|s| silent.contains(s));
    Ok(chosen)
}

/// What [`consensus`] hears: the answers (in the plan's server order), the first error, and
/// the servers that had not answered when the choice was settled.
type Heard = (
    Vec<(SocketAddr, ObjectMeta)>,
    Option<NetError>,
    Vec<SocketAddr>,
);

/// Asks every server of `plan` for the metadata at once (one engine each, all driven by this
/// task) until the answers settle the choice or every server answered or gave up.
async fn ask_all<F: FnMut(&Progress)>(plan: &FetchPlan, kind: Kind, progress: &mut F) -> Heard {
    let ones: Vec<FetchPlan> = plan
        .servers
        .iter()
        .map(|&s| verify::one_server(plan, s))
        .collect();
    // One progress display for every engine (they run in turn on this task, never at once).
    let shared = RefCell::new(progress);
    let shared = &shared;
    let mut asks: Vec<Option<Pin<Box<dyn Future<Output = _> + '_>>>> = ones
        .iter()
        .map(|one| {
            let ask = async move {
                let mut e = engine(kind, one, |p: &Progress| (shared.borrow_mut())(p))?;
                fetch_meta(one, &mut e).await
            };
            Some(Box::pin(ask)
                as Pin<
                    Box<dyn Future<Output = Result<ObjectMeta, NetError>>>,
                >)
        })
        .collect();
    let mut answers = Vec::new();
    let mut first_error = None;
    std::future::poll_fn(|cx| {
        for (k, slot) in asks.iter_mut().enumerate() {
            let Some(ask) = slot.as_mut() else {
                continue;
            };
            if let Poll::Ready(r) = ask.as_mut().poll(cx) {
                *slot = None;
                let s = plan.servers[k];
                match r {
                    Ok(m) => answers.push((s, m)),
                    Err(err) => {
                        tracing::debug!(server = %s, %err, "no metadata");
                        first_error.get_or_insert(err);
                    }
                }
            }
        }
        let done = asks.iter().all(Option::is_none);
        if done || settled(plan.expected_digest, &answers, plan.servers.len()) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    let silent: Vec<SocketAddr> = asks
        .iter()
        .zip(&plan.servers)
        .filter(|(a, _)| a.is_some())
        .map(|(_, s)| *s)
        .collect();
    drop(asks);
    if !silent.is_empty() {
        tracing::debug!(?silent, "settled without these servers' metadata");
    }
    answers.sort_by_key(|(s, _)| plan.servers.iter().position(|x| x == s));
    (answers, first_error, silent)
}

/// Whether `answers` settle the choice among `servers` servers whatever the others say: a
/// strict majority of all of them gave the pinned digest (with a pin) or the same length and
/// digest (without).
fn settled(pin: Option<[u8; 32]>, answers: &[(SocketAddr, ObjectMeta)], servers: usize) -> bool {
    let key = |m: &ObjectMeta| (m.len, m.digest);
    answers.iter().any(|(_, m)| {
        let votes = answers
            .iter()
            .filter(|(_, x)| match pin {
                Some(pin) => x.digest == pin && m.digest == pin,
                None => key(x) == key(m),
            })
            .count();
        votes * 2 > servers
    })
}

/// How often a client asks again for metadata while the server computes the digest.
const HASH_POLL: Duration = Duration::from_millis(500);

/// The object's metadata (`.roam-meta/NAME`): asked for again every [`HASH_POLL`] while the
/// server says it is still computing the digest, showing how far it has got; given up on
/// only if the server's count stops advancing for `give_up_after`.
async fn fetch_meta<G: FnMut(&Progress)>(
    plan: &FetchPlan,
    engine: &mut Engine<'_, G>,
) -> Result<ObjectMeta, NetError> {
    let meta_name = format!("{META_PREFIX}{}", plan.name);
    let bad = |reason: String| NetError::Meta {
        name: plan.name.clone(),
        reason,
    };
    let mut last = (0u64, Clock::wall());
    loop {
        let mut bytes = Vec::new();
        engine
            .receive(&meta_name, 0, META_LEN as u64, &mut bytes)
            .await?;
        match MetaMessage::decode(&bytes).map_err(|e| bad(e.to_string()))? {
            MetaMessage::Ready {
                len,
                digest,
                group_log2,
            } => {
                return Ok(ObjectMeta {
                    len,
                    digest,
                    group_log2,
                })
            }
            MetaMessage::Unavailable(why) => {
                return Err(NetError::Unreachable {
                    name: plan.name.clone(),
                    reason: format!(
                        "the server has it but cannot serve it: {}",
                        match why {
                            Unavailable::Unreadable => "it may not read the file (permissions)",
                            Unavailable::NotRegular => "not a regular file",
                        }
                    ),
                })
            }
            MetaMessage::Hashing { len, hashed } => {
                let now = Clock::wall();
                if hashed > last.0 {
                    last = (hashed, now);
                } else if now.duration_since(last.1) >= plan.give_up_after {
                    return Err(bad(format!(
                        "the server's digest computation stopped at {hashed} of {len} bytes"
                    )));
                }
                tracing::debug!(hashed, len, "the server is computing the digest");
                engine.show(&Progress {
                    bytes: 0,
                    total: Some(len),
                    via: plan.vias[0].addr,
                    server: plan.servers[0],
                    switches: 0,
                    pipes: Vec::new(),
                    waiting: None,
                    server_hashing: Some((hashed, len)),
                });
                tokio::time::sleep(HASH_POLL).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(port: u16, digest: u8) -> (SocketAddr, ObjectMeta) {
        let meta = ObjectMeta {
            len: 100,
            digest: [digest; 32],
            group_log2: 16,
        };
        (SocketAddr::from(([127, 0, 0, 1], port)), meta)
    }

    #[test]
    fn settled_once_a_strict_majority_of_all_servers_agree() {
        // Three servers: two that agree settle it, whatever the third says later.
        assert!(!settled(None, &[said(1, 7)], 3));
        assert!(settled(None, &[said(1, 7), said(2, 7)], 3));
        assert!(!settled(None, &[said(1, 7), said(2, 8)], 3));
        // Two servers: one answer is not a majority of both, a tie never settles.
        assert!(!settled(None, &[said(1, 7)], 2));
        assert!(!settled(None, &[said(1, 7), said(2, 8)], 2));
        assert!(settled(None, &[said(1, 7), said(2, 7)], 2));
        // With a pin, only answers that give it count.
        assert!(!settled(Some([8; 32]), &[said(1, 7), said(2, 7)], 3));
        assert!(settled(Some([7; 32]), &[said(1, 7), said(2, 7)], 3));
        assert!(!settled(Some([7; 32]), &[said(1, 7), said(2, 8)], 3));
    }
}
