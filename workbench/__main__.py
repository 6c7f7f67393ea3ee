from workbench.cli import app

app()
