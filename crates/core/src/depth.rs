//! depth (being written).
