"""Read a source table (the ``ingest`` step) and fingerprint its content.

A source is one of four kinds:

- ``"embedded"``: a data set shipped with the package (:func:`ppdm.prepare.datasets.load`);
- ``"csv"``: a file with a header row; ``?`` and empty cells are missing values;
  fields separated by commas, or by the ``delimiter`` given (``;``, a tab,
  ``|``; :func:`sniff_delimiter` finds it for ``ppdm init``);
- ``"parquet"``: a Parquet file (read with pyarrow);
- ``"sql"``: a query against a database URL (SQLAlchemy; SQLite is the embedded
  default, ``sqlite:///path/to/file.db``; PostgreSQL through psycopg 3,
  ``postgresql+psycopg://user@host:5432/db``; others need their driver). The
  rows are fetched in chunks of :data:`SQL_CHUNK_ROWS` through a server-side
  cursor, never the whole result at once. The password is best kept out of
  the URL: ``password="env:NAME"`` (or ``prefect-secret:<block>``, once the
  Prefect layer registered the scheme) names where it is.

Every route returns the same canonical table: integer and float columns as
numpy dtypes and text columns as the pandas ``string`` dtype with ``pd.NA`` for
missing values, the convention of :mod:`ppdm.prepare.datasets`. So one table written
to a CSV file, a Parquet file and a SQLite table reads back identically, and
its :func:`fingerprint` is the same whichever route it took.

A PostgreSQL column's declared type decides its dtype (the values of one
chunk do not): integers stay ``int64`` (``float64`` when a value is NULL),
``real``, ``double precision`` and ``numeric`` become ``float64``, ``date``
and ``timestamp`` become ISO date text ``YYYY-MM-DD`` (the day; a
``timestamptz`` its day in UTC), which profiling and the calendar hierarchy
read as dates, and ``text``, ``varchar`` and ``char`` stay text, codes with
their leading zeros. NULL is a missing value. Other types, and databases that
do not declare result types (SQLite), are converted as
:func:`pandas.read_sql` converts the whole result.

Errors are :class:`~ppdm.exceptions.SourceError` naming the file or the
database URL (its password masked) and what went wrong. A source with zero
rows is an error too: an empty release is never what the owner meant.

Examples
--------
>>> from ppdm.prepare.ingest import load_source, fingerprint
>>> adult = load_source("embedded", None, embedded="adult")
>>> adult.shape
(48842, 15)
>>> len(fingerprint(adult))
64

The modules: :mod:`~ppdm.prepare.ingest.readers` (the readers of every kind:
whole table, header, bounds, one column), :mod:`~ppdm.prepare.ingest.files`
(CSV and Parquet files, the leading-zero rule), :mod:`~ppdm.prepare.ingest.sql`
(databases), :mod:`~ppdm.prepare.ingest.canonical` (the one representation),
:mod:`~ppdm.prepare.ingest.fingerprints` (content hashes) and
:mod:`~ppdm.prepare.ingest.messages` (how problems are told).
"""

from ppdm.prepare.ingest.files import CSV_DELIMITERS, other_format, sniff_delimiter
from ppdm.prepare.ingest.fingerprints import file_sha256, fingerprint
from ppdm.prepare.ingest.readers import (
    SOURCE_KINDS,
    load_source,
    source_bounds,
    source_column,
    source_columns,
    source_name,
)
from ppdm.prepare.ingest.sql import (
    SQL_CHUNK_ROWS,
    sql_column_kinds,
    sql_typed_values,
    write_sqlite,
)

__all__ = [
    "CSV_DELIMITERS",
    "SOURCE_KINDS",
    "SQL_CHUNK_ROWS",
    "file_sha256",
    "fingerprint",
    "load_source",
    "other_format",
    "sniff_delimiter",
    "source_bounds",
    "source_column",
    "source_columns",
    "source_name",
    "sql_column_kinds",
    "sql_typed_values",
    "write_sqlite",
]
