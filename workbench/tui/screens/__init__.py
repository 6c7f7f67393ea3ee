"""The five workbench screens (one Textual mode each), plus help and small modal dialogs."""
