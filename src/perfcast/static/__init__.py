"""static stage of perfcast."""
