"""The course's figures, widgets and self-checks, one module per notebook."""
