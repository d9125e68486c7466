"""Tests of web/: the app, pages, errors, operations, settings."""
