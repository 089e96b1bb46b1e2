//! audit (being written).
