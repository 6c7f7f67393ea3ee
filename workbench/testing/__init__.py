"""Fixed data the tests, the benchmarks and the TUI's demo share: hand-written reference specs."""
