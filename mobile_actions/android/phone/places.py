"""Maps' place lookup: a small built-in gazetteer of landmarks plus a deterministic fallback.

Why a table and a hash: the virtual phone is offline and must answer the same thing every run, yet a
"what is the address of X" chain needs a real-looking street address on the result card. Famous places
get their real address; any other query gets a stable, plausible (invented) one derived from its text.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Place:
    name: str
    address: str
    category: str
    hours: str = "Open now"
    known: bool = True          # from the table (False: the invented fallback)

    def to_json(self) -> dict:
        return asdict(self)

    @property
    def summary(self) -> str:
        return f"{self.category} · {self.hours}" if self.hours else self.category


# (aliases, name, category, address); aliases are matched after `_norm` (lower case, no accents/punctuation)
_TABLE: tuple[tuple[tuple[str, ...], str, str, str], ...] = (
    (("louvre", "louvre museum", "musee du louvre"), "Louvre Museum", "Art museum",
     "Rue de Rivoli, 75001 Paris, France"),
    (("eiffel tower", "tour eiffel"), "Eiffel Tower", "Historical landmark",
     "Champ de Mars, 5 Av. Anatole France, 75007 Paris, France"),
    (("notre dame", "notre dame de paris", "notre dame cathedral"), "Notre-Dame de Paris", "Cathedral",
     "6 Parvis Notre-Dame - Pl. Jean-Paul II, 75004 Paris, France"),
    (("arc de triomphe",), "Arc de Triomphe", "Historical landmark", "Pl. Charles de Gaulle, 75008 Paris, France"),
    (("musee d orsay", "orsay museum"), "Musée d'Orsay", "Art museum",
     "Esplanade Valéry Giscard d'Estaing, 75007 Paris, France"),
    (("big ben", "elizabeth tower"), "Big Ben", "Historical landmark", "London SW1A 0AA, United Kingdom"),
    (("tower of london",), "Tower of London", "Castle", "London EC3N 4AB, United Kingdom"),
    (("buckingham palace",), "Buckingham Palace", "Palace", "London SW1A 1AA, United Kingdom"),
    (("british museum",), "British Museum", "Museum", "Great Russell St, London WC1B 3DG, United Kingdom"),
    (("brandenburg gate", "brandenburger tor"), "Brandenburg Gate", "Historical landmark",
     "Pariser Platz, 10117 Berlin, Germany"),
    (("neuschwanstein", "neuschwanstein castle"), "Neuschwanstein Castle", "Castle",
     "Neuschwansteinstraße 20, 87645 Schwangau, Germany"),
    (("sagrada familia", "la sagrada familia"), "Sagrada Família", "Basilica",
     "C/ de Mallorca, 401, 08013 Barcelona, Spain"),
    (("alhambra",), "Alhambra", "Fortress", "C. Real de la Alhambra, s/n, 18009 Granada, Spain"),
    (("prado", "prado museum", "museo del prado"), "Museo Nacional del Prado", "Art museum",
     "C. de Ruiz de Alarcón, 23, 28014 Madrid, Spain"),
    (("colosseum", "colosseo", "coliseum"), "Colosseum", "Historical landmark",
     "Piazza del Colosseo, 1, 00184 Roma RM, Italy"),
    (("trevi fountain", "fontana di trevi"), "Trevi Fountain", "Fountain", "Piazza di Trevi, 00187 Roma RM, Italy"),
    (("leaning tower of pisa", "tower of pisa"), "Leaning Tower of Pisa", "Historical landmark",
     "Piazza del Duomo, 56126 Pisa PI, Italy"),
    (("vatican museums",), "Vatican Museums", "Art museum", "Viale Vaticano, 00165 Roma RM, Italy"),
    (("acropolis", "parthenon"), "Acropolis of Athens", "Archaeological site", "Athens 105 58, Greece"),
    (("rijksmuseum",), "Rijksmuseum", "Art museum", "Museumstraat 1, 1071 XX Amsterdam, Netherlands"),
    (("central park",), "Central Park", "Park", "59th St to 110th St, New York, NY 10022, United States"),
    (("statue of liberty",), "Statue of Liberty", "Monument", "Liberty Island, New York, NY 10004, United States"),
    (("empire state building",), "Empire State Building", "Observation deck",
     "20 W 34th St., New York, NY 10001, United States"),
    (("times square",), "Times Square", "Plaza", "Manhattan, NY 10036, United States"),
    (("golden gate bridge",), "Golden Gate Bridge", "Bridge", "Golden Gate Bridge, San Francisco, CA, United States"),
    (("space needle",), "Space Needle", "Observation deck", "400 Broad St, Seattle, WA 98109, United States"),
    (("cn tower",), "CN Tower", "Observation deck", "290 Bremner Blvd, Toronto, ON M5V 3L9, Canada"),
    (("sydney opera house", "opera house sydney"), "Sydney Opera House", "Performing arts theatre",
     "Bennelong Point, Sydney NSW 2000, Australia"),
    (("tokyo tower",), "Tokyo Tower", "Observation deck", "4 Chome-2-8 Shibakoen, Minato City, Tokyo 105-0011, Japan"),
    (("taj mahal",), "Taj Mahal", "Mausoleum", "Dharmapuri, Forest Colony, Tajganj, Agra, Uttar Pradesh 282001, India"),
    (("burj khalifa",), "Burj Khalifa", "Skyscraper", "1 Sheikh Mohammed bin Rashid Blvd, Dubai, United Arab Emirates"),
    (("christ the redeemer", "cristo redentor"), "Christ the Redeemer", "Monument",
     "Parque Nacional da Tijuca, Rio de Janeiro - RJ, Brazil"),
)

_STREETS = ("Main Street", "Market Street", "Oak Avenue", "Station Road", "High Street", "Park Lane", "River Road",
            "Church Street", "Mill Lane", "King Street", "Harbour Way", "Elm Street", "Bridge Street", "Cedar Avenue")
_CITIES = ("Springfield, IL 62701, United States", "Portland, OR 97205, United States",
           "Madison, WI 53703, United States", "Burlington, VT 05401, United States",
           "Boulder, CO 80302, United States", "Savannah, GA 31401, United States",
           "Santa Fe, NM 87501, United States", "Ann Arbor, MI 48104, United States")
_CATEGORIES = (("cafe", "Café"), ("coffee", "Coffee shop"), ("museum", "Museum"), ("park", "Park"),
               ("station", "Train station"), ("airport", "Airport"), ("restaurant", "Restaurant"),
               ("pizza", "Pizza restaurant"), ("hotel", "Hotel"), ("library", "Library"), ("school", "School"),
               ("university", "University"), ("hospital", "Hospital"), ("pharmacy", "Pharmacy"),
               ("bakery", "Bakery"), ("bar", "Bar"), ("gym", "Gym"), ("market", "Market"), ("bank", "Bank"),
               ("church", "Church"), ("beach", "Beach"), ("zoo", "Zoo"), ("stadium", "Stadium"))
_COORDS = re.compile(r"^\s*[-+]?\d{1,3}(\.\d+)?\s*,\s*[-+]?\d{1,3}(\.\d+)?\s*$")


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    words = re.sub(r"[^a-z0-9]+", " ", text).split()
    return " ".join(words[1:] if words[:1] == ["the"] else words)


_ALIASES = sorted(((alias, row) for row in _TABLE for alias in row[0]), key=lambda a: -len(a[0]))


def lookup(query: str) -> Place:
    """The place Maps shows for a search: a landmark from the table (an alias anywhere in the query, as
    whole words, longest alias first), else an invented but stable address for the query."""
    q = _norm(query)
    padded = f" {q} "
    for alias, (_, name, category, address) in _ALIASES:
        if f" {alias} " in padded:
            return Place(name, address, category)
    label = " ".join(query.split()) or "Dropped pin"
    if _COORDS.match(query):
        return Place("Dropped pin", label.replace(" ", ""), "Location", "", known=False)
    h = int.from_bytes(hashlib.sha256(q.encode()).digest()[:8], "big")
    address = f"{1 + h % 240} {_STREETS[(h >> 8) % len(_STREETS)]}, {_CITIES[(h >> 16) % len(_CITIES)]}"
    words = set(q.split())
    category = next((c for key, c in _CATEGORIES if key in words or key + "s" in words), "Point of interest")
    hours = "Open 24 hours" if category in ("Park", "Beach") else "Open now"
    return Place(label, address, category, hours, known=False)


__all__ = ["Place", "lookup"]
