"""See ARCHITECTURE.md for this stage's place in the pipeline."""
