"""Releases beyond one machine's memory: the pipeline's steps on Parquet partitions."""
