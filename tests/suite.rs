//! One module per area under test.

mod stdio_servers;
