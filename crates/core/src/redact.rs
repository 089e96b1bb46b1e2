//! redact (being written).
