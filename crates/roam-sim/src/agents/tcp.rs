//! TCP flow agents (owned by the TCP engine work).
