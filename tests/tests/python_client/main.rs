//! The official Python client (`kubernetes` from PyPI, unmodified) against a real
//! `apiary dev --flavor kubernetes` cluster: the scripts under `tests/python/` run in the venv
//! `.ci/run` prepares, and fail the test (not skip it) when that venv is missing.

mod t10_paged_list_and_watch;
