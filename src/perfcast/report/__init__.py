"""Reports: models and predictions as text, markdown, CSV and JSON."""
