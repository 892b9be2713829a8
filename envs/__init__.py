"""Rules engines, observers and PettingZoo environments of the two games."""
