"""measure stage of perfcast."""
