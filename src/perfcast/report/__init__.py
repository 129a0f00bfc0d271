"""report stage of perfcast."""
