"""Tests of the site's pages (web/pages.py, web/resources.py, templates): what a reader sees."""
