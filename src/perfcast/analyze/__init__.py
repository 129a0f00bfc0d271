"""analyze stage of perfcast."""
