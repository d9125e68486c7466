"""Tests of web/commands/: the command line."""
