//! confine (being written).
