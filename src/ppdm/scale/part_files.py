"""Reading the Parquet parts of a partitioned table, fast.

Every out-of-core step reads each part of its input once or more. Parquet
keeps a text column as a dictionary of its values and one code per row;
:func:`pandas.read_parquet` turns it into one string per row as it decodes
the pages, which on a 250,000-row Adult part is about 0.19 s of a 0.2 s read.
Asking pyarrow for the dictionaries instead (``read_dictionary``) takes
0.03 s; rows can then be taken, filtered or permuted on the codes, and the
strings are built once, at the end, for the rows that are kept
(:func:`decoded`: another 0.03 s for a whole part). The frame read is the
same as :func:`pandas.read_parquet`'s, dtypes and values (the part's own
Arrow schema, with its pandas metadata, is cast back before the conversion).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["decoded", "parquet_rows", "read_part", "read_part_table"]


def _is_text(kind: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def read_part_table(path: str | Path, columns: Sequence[str] | None = None) -> Any:
    """The part as a :class:`pyarrow.Table`, its text columns as dictionaries.

    Take, filter or permute its rows, then :func:`decoded` gives the frame
    :func:`pandas.read_parquet` would have read for those rows.
    """
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    wanted = schema.names if columns is None else list(columns)
    text = [name for name in wanted if _is_text(schema.field(name).type)]
    return pq.read_table(path, columns=wanted, read_dictionary=text)


def decoded(table: Any, path: str | Path, *, coded: Sequence[str] = ()) -> pd.DataFrame:
    """``table`` (rows of the part at ``path``) as pandas reads the part.

    Text columns named in ``coded`` stay categorical (their dictionary codes):
    for columns that are only looked up, never released as read.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    fields = [
        table.schema.field(name) if name in coded else schema.field(name)
        for name in table.column_names
    ]
    return table.cast(pa.schema(fields, metadata=schema.metadata)).to_pandas()


def read_part(path: str | Path, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`pandas.read_parquet` of one part (``columns``, or all), faster."""
    return decoded(read_part_table(path, columns), path)


def parquet_rows(path: str | Path) -> int:
    """Rows of a Parquet file, from its footer."""
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)
