"""Test instruments shared by the tests, the scripts and the benchmarks (never imported by the product).

- :mod:`workbench.testing.format_fuzz`: random but plausible output formats, drawn as data and written as
  Jinja chat templates (the measure of how well the analysis generalizes);
- :mod:`workbench.testing.fuzz_run`: one drawn format analysed, validated and round-tripped, and the pass
  rates by axis over many seeds.
"""
