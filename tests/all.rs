//! End-to-end suites: each spawns the real binaries over stdio.

mod suite;
