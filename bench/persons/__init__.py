"""Person identity against gold: real lists with person identifiers, their conversion and the ceilings."""
