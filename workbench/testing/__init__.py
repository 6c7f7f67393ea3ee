"""Test instruments and fixed data shared by the tests, the scripts, the benchmarks and the TUI's demo (never
imported by the product's pipeline).

- :mod:`workbench.testing.reference_specs`: hand-written reference specs;
- :mod:`workbench.testing.format_fuzz`: random but plausible output formats, drawn as data and written as
  Jinja chat templates (the measure of how well the analysis generalizes);
- :mod:`workbench.testing.fuzz_run`: one drawn format analysed, validated and round-tripped, and the pass
  rates by axis over many seeds.
"""
