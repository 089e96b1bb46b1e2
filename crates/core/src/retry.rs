//! retry (being written).
