"""Direct identifiers recognised by a column's name alone.

The words and stems of a column name that name a direct identifier (HIPAA
Safe Harbor's kinds: names, e-mail addresses, phone numbers, record and
account numbers, ...). The configuration checks the names it is given with
:func:`identifier_name` before any data is read, so this module reads no
data and imports no pandas; :mod:`ppdm.identifiers` adds the checks on a
column's values.
"""

from __future__ import annotations

import re

__all__ = ["IDENTIFIER_STEMS", "IDENTIFIER_WORDS", "identifier_name", "name_tokens"]

#: Words of a column name that name a direct identifier (compared with the
#: name's lower-case tokens and with the whole name).
IDENTIFIER_WORDS = frozenset(
    "name names firstname lastname surname forename fullname givenname middlename "
    "familyname maidenname nickname username login email mail ssn phone telephone "
    "mobile cellphone fax address street passport iban uuid guid mrn ip id "
    "url website homepage ipaddress npi vin".split()
)
#: Parts of a column name that name a direct identifier wherever they appear.
IDENTIFIER_STEMS = (
    "firstname",
    "lastname",
    "surname",
    "fullname",
    "email",
    "phonenumber",
    "passport",
    "socialsecurity",
    "streetaddress",
    "username",
    "creditcard",
    "cardnumber",
    "licenseplate",
    "driverslicense",
    "recordnumber",
    "medicalrecord",
    "accountnumber",
    "insuranceid",
    "memberid",
    "ipaddress",
    "serialnumber",
)
# "name" of a thing, not of a person: country_name, drug_name
_THING_WORDS = frozenset(
    "country city county region state town place site ward hospital clinic "
    "department company employer product drug medication diagnosis disease "
    "file column field".split()
)


def name_tokens(name: str) -> tuple[str, ...]:
    """Lower-case words of a column name: ``PatientID`` -> ``("patient", "id")``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    spaced = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", spaced)
    return tuple(t for t in re.split(r"[^a-z0-9]+", spaced.lower()) if t)


def identifier_name(name: str) -> str | None:
    """The identifier word a column name holds (``"email"``), or None.

    >>> identifier_name("PatientID"), identifier_name("e-mail")
    ('id', 'mail')
    >>> identifier_name("country_name") is None
    True
    """
    tokens = name_tokens(name)
    compact = "".join(tokens)
    for token in (*tokens, compact):
        if token in IDENTIFIER_WORDS:
            if token == "name" and any(t in _THING_WORDS for t in tokens):
                return None
            return token
    for stem in IDENTIFIER_STEMS:
        if stem in compact:
            return stem
    return None
