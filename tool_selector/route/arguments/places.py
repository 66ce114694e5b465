"""Words that stand for values a tool takes in another form: places and their time zones, currencies,
languages.

A place is found by its name in the request, in any case and with or without accents ("Tokyo", "in
tokyo", "São Paulo"): the cities of the IANA time zone names (``zoneinfo.available_timezones()``, the
last part of ``Region/City``), and a small table of big cities and regions that are not IANA names (San
Francisco, Seattle, Boston, Kyoto, Mumbai, "Pacific time", ...). An abbreviation ("PST", "CET") or an
IANA name written out is recognised by tool_selector/core/arguments.py; :func:`zone_of` maps it here.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import zoneinfo
from dataclasses import dataclass

_REGIONS = frozenset("Africa America Asia Atlantic Australia Europe Indian Pacific".split())
# IANA city parts that are English words, names or legacy spellings: never read as a place
_NOT_PLACES = frozenset(
    """ACT LHI NSW North South West Queensland Tasmania Victoria Yancowinna Center Easter Christmas Wake
    Midway Virgin Knox Knox_IN Marengo Vevay Winamac Tell_City Petersburg Monticello Beulah New_Salem
    Vincennes Menominee Regina Darwin Oral Truk Yap Mendoza Cordoba Stanley Resolute Reunion Canary
    Currie Eucla Atka Shiprock Ensenada Creston Thule Dawson Chatham Jersey Johnston Calcutta Kiev Saigon
    Rangoon Katmandu Dacca Ulan_Bator Thimbu Asmera Macao Chungking Montreal Godthab Faeroe Tel_Aviv
    Porto_Acre Santa_Isabel Coral_Harbour Comodrivadavia ComodRivadavia Jan_Mayen Busingen Lower_Princes
    Zaporozhye Uzhgorod Nipigon Rainy_River Thunder_Bay Pangnirtung Yellowknife Enderbury Ponape Timbuktu
    Harbin Kashgar Ujung_Pandang Ashkhabad Indianapolis Louisville Fort_Wayne Buenos_Aires""".split()
)
# Big cities and regions that are no IANA city, and the zone people mean by them.
_TABLE = {
    "America/Los_Angeles": "San Francisco|SF|Bay Area|Silicon Valley|San Jose|San Diego|Seattle|Portland|"
    "Las Vegas|Sacramento|California|West Coast|Pacific time|Pacific Standard Time|Pacific Daylight Time|"
    "LA",
    "America/New_York": "Boston|Washington DC|Washington D.C.|DC|NYC|Atlanta|Miami|Philadelphia|Pittsburgh|"
    "Orlando|Charlotte|East Coast|Eastern time|Eastern Standard Time|Eastern Daylight Time",
    "America/Chicago": "Dallas|Houston|Austin|Minneapolis|New Orleans|Nashville|St Louis|Kansas City|"
    "Central time|Central Standard Time",
    "America/Denver": "Salt Lake City|Albuquerque|Mountain time|Mountain Standard Time",
    "America/Toronto": "Ottawa|Montreal",
    "America/Edmonton": "Calgary",
    "America/Sao_Paulo": "Rio|Rio de Janeiro|Brasilia",
    "America/Argentina/Buenos_Aires": "Buenos Aires",
    "America/Indiana/Indianapolis": "Indianapolis",
    "Asia/Tokyo": "Tokio|Kyoto|Osaka|Yokohama|Nagoya|Japan",
    "Asia/Kolkata": "Mumbai|Bombay|Delhi|New Delhi|Bangalore|Bengaluru|Hyderabad|Chennai|Pune|Calcutta|India",
    "Asia/Shanghai": "Beijing|Shenzhen|Guangzhou|Hangzhou|China",
    "Asia/Ho_Chi_Minh": "Hanoi|Saigon",
    "Asia/Jerusalem": "Tel Aviv",
    "Asia/Dubai": "Abu Dhabi",
    "Europe/Berlin": "Munich|Frankfurt|Hamburg|Cologne|Germany",
    "Europe/Paris": "Lyon|Marseille|France",
    "Europe/Madrid": "Barcelona|Seville|Spain",
    "Europe/Rome": "Milan|Naples|Florence|Venice|Italy",
    "Europe/Zurich": "Geneva|Basel|Switzerland",
    "Europe/London": "Edinburgh|Manchester|Glasgow|Birmingham|UK|Britain|England|UK time",
    "Europe/Kyiv": "Kiev",
    "Europe/Moscow": "St Petersburg|Saint Petersburg",
    "Europe/Warsaw": "Krakow",
    "Africa/Johannesburg": "Cape Town|Durban",
    "Pacific/Honolulu": "Hawaii",
    "America/Anchorage": "Alaska",
}
_ABBREVIATIONS = {
    "America/Los_Angeles": "PST PDT", "America/Denver": "MST MDT", "America/Chicago": "CST CDT",
    "America/New_York": "EST EDT", "America/Anchorage": "AKST AKDT", "Pacific/Honolulu": "HST",
    "Europe/London": "BST", "Europe/Berlin": "CET CEST", "Europe/Athens": "EET EEST",
    "Europe/Lisbon": "WET", "Asia/Kolkata": "IST", "Asia/Tokyo": "JST", "Asia/Seoul": "KST",
    "Asia/Hong_Kong": "HKT", "Asia/Singapore": "SGT", "Asia/Manila": "PHT", "Asia/Jakarta": "WIB",
    "Australia/Sydney": "AEST AEDT", "Australia/Adelaide": "ACST ACDT", "Australia/Perth": "AWST",
    "Pacific/Auckland": "NZST NZDT", "Europe/Moscow": "MSK", "Africa/Johannesburg": "SAST",
    "UTC": "UTC GMT",
}  # fmt: skip
# written only in capitals: in lower case they are words ("la", "dc", "uk")
_CAPITALS_ONLY = frozenset("SF LA DC NYC UK".split())
# region names read as a zone only with "time" after them or right after a time ("10am Pacific")
_REGION_ZONES = {
    "pacific": "America/Los_Angeles", "eastern": "America/New_York", "central": "America/Chicago",
    "mountain": "America/Denver",
}  # fmt: skip
_OFFSET = re.compile(r"(?:UTC|GMT)\s*([+\-−])\s*(\d\d?)(?::?(\d\d))?$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Place:
    start: int
    end: int
    name: str  # the place's name as places are written ("San Francisco", "Tokyo")
    zone: str  # its IANA zone


def fold(text: str) -> str:
    """Lower case without accents, one character for one ("São" -> "sao"), so spans stay aligned."""
    return "".join(unicodedata.normalize("NFKD", c)[0].lower()[0] for c in text)


@functools.cache
def _names() -> dict[str, tuple[str, str]]:
    """Folded place name -> (name as written, zone); the table's entries win over IANA cities."""
    names: dict[str, tuple[str, str]] = {}
    for zone in sorted(zoneinfo.available_timezones(), key=lambda z: (-z.count("/"), z)):
        region, _, city = zone.rpartition("/")
        if region.split("/")[0] in _REGIONS and city not in _NOT_PLACES:
            name = city.replace("_", " ")
            names.setdefault(fold(name), (name, zone))
    for zone, written in _TABLE.items():
        for name in written.split("|"):
            names[fold(name)] = (name, zone)
    return names


@functools.cache
def _pattern() -> re.Pattern[str]:
    words = sorted(_names(), key=lambda n: (-len(n), n))
    alternatives = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in words)
    return re.compile(rf"(?<![\w/.@-])(?:{alternatives})(?!\w|/\w|\.\w|-\w)")


def find_places(text: str) -> list[Place]:
    """The places named in the text, in order (longest name first where two would overlap)."""
    folded = fold(text)
    places = []
    for match in _pattern().finditer(folded):
        written = text[match.start() : match.end()]
        key = " ".join(match.group().split())
        name, zone = _names()[key]
        if name in _CAPITALS_ONLY and written != name:
            continue
        places.append(Place(match.start(), match.end(), name, zone))
    return places


def region_zone(word: str) -> str | None:
    """The zone of a region word ("Pacific" -> America/Los_Angeles)."""
    return _REGION_ZONES.get(word.lower())


def zone_of(written: str) -> str | None:
    """The IANA zone for a zone the core recognised: an IANA name as written, an abbreviation through the
    table, a UTC offset as its ``Etc/GMT`` zone (whole hours); None when none fits."""
    if written in zoneinfo.available_timezones() and written.upper() not in _abbreviations():
        return written
    zone = _abbreviations().get(written.upper())
    if zone is not None:
        return zone
    offset = _OFFSET.match(written.strip())
    if offset is not None and not offset.group(3):
        hours = int(offset.group(2))
        if hours == 0:
            return "UTC"
        sign = "-" if offset.group(1) == "+" else "+"  # Etc/GMT signs are inverted
        return f"Etc/GMT{sign}{hours}"
    return None


@functools.cache
def _abbreviations() -> dict[str, str]:
    return {word: zone for zone, words in _ABBREVIATIONS.items() for word in words.split()}


CURRENCY_CODES = frozenset(
    "USD EUR GBP JPY CHF CAD AUD NZD INR CNY HKD SGD SEK NOK DKK PLN CZK HUF MXN BRL ZAR KRW TRY ILS AED "
    "THB IDR PHP RUB BTC ETH".split()
)
_CURRENCY_WORDS = {
    "dollar": "USD", "dollars": "USD", "buck": "USD", "bucks": "USD", "euro": "EUR", "euros": "EUR",
    "pound": "GBP", "pounds": "GBP", "sterling": "GBP", "yen": "JPY", "franc": "CHF", "francs": "CHF",
    "rupee": "INR", "rupees": "INR", "yuan": "CNY", "renminbi": "CNY",
    "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR",
}  # fmt: skip
CURRENCY = re.compile(
    r"(?<![\w$€£¥₹])(?:(?-i:"
    + "|".join(sorted(CURRENCY_CODES))
    + r")|"
    + "|".join(sorted((re.escape(w) for w in _CURRENCY_WORDS if w.isalpha()), key=len, reverse=True))
    + r")(?!\w)",
    re.IGNORECASE,
)


def currency_of(written: str) -> str | None:
    """The ISO code of a currency written as a code, a word or a symbol."""
    if written.upper() in CURRENCY_CODES and written.isupper():
        return written.upper()
    return _CURRENCY_WORDS.get(written.lower())


LANGUAGES = {
    "english": "en", "german": "de", "french": "fr", "spanish": "es", "italian": "it", "portuguese": "pt",
    "dutch": "nl", "japanese": "ja", "korean": "ko", "chinese": "zh", "russian": "ru", "arabic": "ar",
    "hindi": "hi", "polish": "pl", "swedish": "sv", "turkish": "tr", "ukrainian": "uk", "greek": "el",
}  # fmt: skip
LANGUAGE = re.compile(r"\b(?:" + "|".join(LANGUAGES) + r")\b", re.IGNORECASE)
