"""``python -m bench``: tether's performance, each row measured beside a baseline in one run."""
