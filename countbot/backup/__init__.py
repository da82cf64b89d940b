"""Backups of an instance: one archive (store, memory index, workspace, config) with a manifest
of hashes, checked and restored into a working instance; made by hand or on a schedule."""
