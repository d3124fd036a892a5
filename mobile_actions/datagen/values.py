"""Realistic, diverse argument values: people, emails, phone numbers, places, businesses, texts.

Values are composed from parts (given name x family name x email pattern x domain; country phone
formats with random digits; street x city per country) so 10,000 rows rarely repeat a value, and
they are international on purpose (accents, particles, non-US formats): a caller trained only on
"John Smith, 555-1234" copies "Zoë Nguyễn, +84 91 234 5678" badly.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from random import Random

# ------------------------------------------------------------------------------------------ people
FIRST_NAMES = (
    # English-speaking
    "James", "Olivia", "Liam", "Emma", "Noah", "Ava", "Ethan", "Mia", "Lucas", "Harper", "Mason", "Chloe",
    "Grace", "Jack", "Ruby", "Oscar", "Sophie", "Daniel", "Hannah", "Samuel", "Megan", "Ryan", "Kate", "Tom",
    # Romance languages
    "José", "María", "Lucía", "Andrés", "Sofía", "Mateo", "Valentina", "Álvaro", "Inés", "Tomás", "Camila",
    "Joaquín", "Martín", "Renée", "Zoé", "Chloé", "Léa", "Étienne", "Hélène", "François", "Amélie", "Gaël",
    "Benoît", "Céline", "Noémie", "Raphaël", "Giulia", "Matteo", "Francesca", "Lorenzo", "Chiara", "Niccolò",
    "João", "Conceição", "Luíza", "Gonçalo", "Thiago", "Beatriz",
    # Germanic, Nordic, Slavic
    "Jürgen", "Lena", "Björn", "Søren", "Åsa", "Märta", "Katrin", "Lukas", "Jonas", "Annika", "Henrik",
    "Małgorzata", "Paweł", "Zofia", "Agnieszka", "Tomáš", "Jiří", "Petra", "Ivana", "Dragan", "Milena",
    "Anastasia", "Dmitri", "Olga", "Nikolai", "Katarzyna", "Elif", "Özge", "Mehmet", "Ayşe", "Çağla",
    # African, Middle Eastern, South Asian
    "Chidi", "Ngozi", "Oluwaseun", "Amara", "Kwame", "Ama", "Thandiwe", "Sipho", "Fatou", "Moussa",
    "Omar", "Layla", "Yusuf", "Fatima", "Karim", "Nour", "Zainab", "Tariq", "Yasmin", "Hamid",
    "Priya", "Arjun", "Ananya", "Rohan", "Kavya", "Vikram", "Deepika", "Sanjay", "Aisha", "Rahul",
    # East and South-East Asian
    "Wei", "Mei", "Jian", "Xiaoling", "Haruto", "Yuki", "Sakura", "Kenji", "Aiko", "Ji-woo", "Min-jun",
    "Seo-yeon", "Hoa", "Minh", "Thảo", "Linh", "Nguyệt", "Arnav", "Siti", "Rizal", "Maile", "Kai",
)
LAST_NAMES = (
    "Smith", "Johnson", "Williams", "Brown", "Taylor", "Walker", "O'Brien", "McAllister", "Fitzgerald",
    "García", "Martínez", "López", "Hernández", "González", "Rodríguez", "Pérez", "Sánchez", "Muñoz", "Núñez",
    "de la Cruz", "del Río", "Ibáñez", "Dubois", "Lefèvre", "Moreau", "Girard", "Fontaine", "Beaumont",
    "Bélanger", "Côté", "Gagné", "Rossi", "Bianchi", "Esposito", "Romano", "Colombo", "De Luca", "Ferrari",
    "Silva", "Santos", "Gonçalves", "Araújo", "Conceição", "Magalhães", "Müller", "Schmidt", "Schröder",
    "Weiß", "Köhler", "Bauer", "van der Berg", "van Dijk", "de Vries", "Jansen", "Nielsen", "Sørensen",
    "Andersson", "Lindqvist", "Åberg", "Kowalski", "Wiśniewska", "Nowak", "Zieliński", "Novák", "Dvořáková",
    "Horváth", "Petrović", "Jovanović", "Ivanova", "Smirnov", "Yılmaz", "Öztürk", "Şahin", "Papadopoulos",
    "Okafor", "Adeyemi", "Mensah", "Nkosi", "Diallo", "Ndiaye", "Haddad", "Khalil", "El-Amin", "Rahman",
    "Raman", "Sharma", "Patel", "Iyer", "Gupta", "Reddy", "Chatterjee", "Banerjee", "Nair", "Khan",
    "Wang", "Li", "Zhang", "Chen", "Liu", "Tanaka", "Suzuki", "Watanabe", "Yamamoto", "Kim", "Park", "Choi",
    "Nguyễn", "Trần", "Lê", "Phạm", "Santoso", "Wijaya", "Kealoha", "Ó Súilleabháin", "MacLeod",
)
NICKNAMES = ("mom", "dad", "my sister", "my brother", "my boss", "my landlord", "my coach", "grandma",
             "my manager", "my colleague", "my cousin", "my neighbour", "my neighbor", "the team lead")


@dataclass(frozen=True)
class Person:
    first: str
    last: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"


def ascii_fold(text: str) -> str:
    """Accents and marks removed, for email local parts ("Zoé Nguyễn" -> "zoe.nguyen")."""
    text = text.replace("ß", "ss").replace("ø", "o").replace("Ø", "O").replace("å", "a").replace("ł", "l").replace("Ł", "L")
    text = text.replace("đ", "d").replace("Đ", "D").replace("ı", "i")
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def person(rng: Random) -> Person:
    return Person(rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES))


# ------------------------------------------------------------------------------------------ email
PERSONAL_DOMAINS = ("gmail.com", "gmail.com", "gmail.com", "outlook.com", "hotmail.com", "yahoo.com", "icloud.com",
                    "proton.me", "web.de", "gmx.de", "orange.fr", "free.fr", "libero.it", "yahoo.co.jp",
                    "naver.com", "qq.com", "163.com", "mail.ru", "yandex.ru", "uol.com.br", "bigpond.com",
                    "rediffmail.com", "t-online.de", "hotmail.co.uk", "btinternet.com", "live.ca", "fastmail.com")
WORK_TLDS = ("com", "com", "org", "io", "co", "net", "de", "fr", "co.uk", "es", "it", "ca", "com.au", "in", "jp", "nl", "ch")
ROLE_BOXES = ("info", "support", "billing", "hello", "contact", "sales", "hr", "ops", "team", "admin", "bookings",
              "reservations", "press", "careers", "accounts", "office", "frontdesk", "orders", "help", "jobs")
COMPANY_WORDS = ("acme", "northwind", "bluepeak", "riverstone", "sunfield", "lumen", "brightpath", "oakridge",
                 "novatech", "greenleaf", "silverline", "harbor", "kitefly", "mapleworks", "quantix", "evergreen",
                 "redbrick", "cobalt", "tidewater", "starling", "pinecrest", "orbitlab", "fernhill", "zenith",
                 "papaya", "ironwood", "skyline", "copperfox", "meridian", "saltmarsh", "bytebridge", "alpaca")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", ascii_fold(text).lower())


def email_for(rng: Random, p: Person) -> str:
    first, last = _slug(p.first) or "x", _slug(p.last) or "y"
    local = rng.choice((f"{first}.{last}", f"{first}{last}", f"{first[0]}{last}", f"{first}_{last}",
                        f"{first}.{last}{rng.randint(1, 99)}", f"{first}{rng.randint(70, 2009)}", f"{last}.{first}",
                        f"{first}-{last}", f"{first[0]}.{last}", f"{first}"))
    if rng.random() < 0.3:
        return f"{local}@{company_domain(rng)}"
    return f"{local}@{rng.choice(PERSONAL_DOMAINS)}"


def company_domain(rng: Random) -> str:
    word = rng.choice(COMPANY_WORDS)
    if rng.random() < 0.3:
        word += rng.choice(("-labs", "-group", "-studio", "hq", "-partners", "-health", "-legal", "-design"))
    return f"{word}.{rng.choice(WORK_TLDS)}"


def any_email(rng: Random) -> tuple[str, Person | None]:
    """An address and, when it is a person's, the person (so a request can say "email Ana at ...")."""
    if rng.random() < 0.2:
        return f"{rng.choice(ROLE_BOXES)}@{company_domain(rng)}", None
    p = person(rng)
    return email_for(rng, p), p


# ------------------------------------------------------------------------------------------ phones
# '#' is a random digit; country formats as people actually type them.
PHONE_FORMATS = (
    "(###) 555-####", "###-555-####", "###.555.####", "+1 ### 555 ####", "+1 (###) ###-####", "###-###-####", "555-####",
    "+44 20 7946 0###", "07700 900###", "+44 7### ######", "020 7### ####",
    "+33 6 ## ## ## ##", "06 ## ## ## ##", "+33 1 ## ## ## ##",
    "+49 30 ########", "0151 ########", "+49 170 #######",
    "+34 6## ### ###", "6## ## ## ##", "+39 3## ### ####", "+351 91# ### ###",
    "+91 98### #####", "+91-9#########", "+81 90-####-####", "090-####-####", "+82 10-####-####",
    "+86 138 #### ####", "+84 9# ### ####", "+65 9### ####", "+61 4## ### ###", "04## ### ###",
    "+64 21 ### ####", "+55 11 9####-####", "+52 55 #### ####", "+54 9 11 ####-####", "+57 3## ### ####",
    "+234 80# ### ####", "+27 8# ### ####", "+254 7## ######", "+20 10 #### ####", "+971 50 ### ####",
    "+90 5## ### ## ##", "+48 5## ### ###", "+46 70 ### ## ##", "+31 6 ########", "+41 7# ### ## ##",
    "+7 9## ###-##-##", "+1 416 ###-####", "+353 8# ### ####",
)


def phone(rng: Random) -> str:
    fmt = rng.choice(PHONE_FORMATS)
    return "".join(str(rng.randrange(10)) if c == "#" else c for c in fmt)


# ------------------------------------------------------------------------------------------ places
CITIES = (
    ("New York", "US"), ("San Francisco", "US"), ("Chicago", "US"), ("Austin", "US"), ("Seattle", "US"), ("Boston", "US"),
    ("Toronto", "CA"), ("Montréal", "CA"), ("Québec City", "CA"), ("Vancouver", "CA"), ("London", "UK"), ("Manchester", "UK"),
    ("Edinburgh", "UK"), ("Dublin", "IE"), ("Paris", "FR"), ("Lyon", "FR"), ("Besançon", "FR"), ("Marseille", "FR"),
    ("Berlin", "DE"), ("München", "DE"), ("Köln", "DE"), ("Hamburg", "DE"), ("Zürich", "CH"), ("Genève", "CH"),
    ("Wien", "AT"), ("Madrid", "ES"), ("Barcelona", "ES"), ("Sevilla", "ES"), ("Málaga", "ES"), ("Lisboa", "PT"),
    ("Porto", "PT"), ("Roma", "IT"), ("Milano", "IT"), ("Napoli", "IT"), ("Torino", "IT"), ("Amsterdam", "NL"),
    ("Utrecht", "NL"), ("København", "DK"), ("Stockholm", "SE"), ("Malmö", "SE"), ("Oslo", "NO"), ("Reykjavík", "IS"),
    ("Kraków", "PL"), ("Gdańsk", "PL"), ("Praha", "CZ"), ("Brno", "CZ"), ("Budapest", "HU"), ("İstanbul", "TR"),
    ("Athens", "GR"), ("Tokyo", "JP"), ("Ōsaka", "JP"), ("Kyoto", "JP"), ("Seoul", "KR"), ("Busan", "KR"),
    ("Shanghai", "CN"), ("Hà Nội", "VN"), ("Hồ Chí Minh City", "VN"), ("Singapore", "SG"), ("Bangkok", "TH"),
    ("Mumbai", "IN"), ("Bengaluru", "IN"), ("New Delhi", "IN"), ("Sydney", "AU"), ("Melbourne", "AU"),
    ("Auckland", "NZ"), ("São Paulo", "BR"), ("Rio de Janeiro", "BR"), ("Ciudad de México", "MX"), ("Bogotá", "CO"),
    ("Buenos Aires", "AR"), ("Lagos", "NG"), ("Nairobi", "KE"), ("Cape Town", "ZA"), ("Cairo", "EG"), ("Dubai", "AE"),
    ("Marrakech", "MA"), ("Accra", "GH"), ("Medellín", "CO"), ("Valparaíso", "CL"), ("Cusco", "PE"),
)
_STREETS = {
    "US": ("{n} Maple Ave", "{n} Mission St", "{n} Broadway", "{n} Elm Street", "{n} Sunset Blvd", "{n} Oak Drive", "{n} 5th Avenue", "{n} Lakeview Rd"),
    "CA": ("{n} rue Saint-Denis", "{n} Queen St W", "{n} Robson St", "{n} boulevard René-Lévesque"),
    "UK": ("{n} Baker Street", "{n} High Street", "{n} Abbey Road", "{n} King's Road", "Flat {s}, {n} Victoria Road"),
    "IE": ("{n} Grafton Street", "{n} O'Connell Street"),
    "FR": ("{n} rue de la Paix", "{n} avenue des Champs-Élysées", "{n} rue Mouffetard", "{n} boulevard Saint-Germain", "{n} quai de la Tournelle"),
    "DE": ("Friedrichstraße {n}", "Hauptstraße {n}", "Schönhauser Allee {n}", "Königsallee {n}", "Müllerstraße {n}"),
    "CH": ("Bahnhofstrasse {n}", "Rue du Rhône {n}"), "AT": ("Mariahilfer Straße {n}", "Kärntner Straße {n}"),
    "ES": ("Calle de Alcalá {n}", "Carrer de Mallorca {n}", "Calle Sierpes {n}", "Gran Vía {n}", "Paseo de la Castellana {n}"),
    "PT": ("Rua Augusta {n}", "Avenida da Liberdade {n}", "Rua de Santa Catarina {n}"),
    "IT": ("Via Roma {n}", "Via del Corso {n}", "Corso Buenos Aires {n}", "Via Toledo {n}", "Piazza Navona {n}"),
    "NL": ("Prinsengracht {n}", "Kalverstraat {n}"), "DK": ("Strøget {n}", "Nørrebrogade {n}"),
    "SE": ("Drottninggatan {n}", "Södergatan {n}"), "NO": ("Karl Johans gate {n}",), "IS": ("Laugavegur {n}",),
    "PL": ("ul. Floriańska {n}", "ul. Długa {n}"), "CZ": ("Václavské náměstí {n}", "Masarykova {n}"),
    "HU": ("Andrássy út {n}",), "TR": ("İstiklal Caddesi No:{n}",), "GR": ("Ermou {n}",),
    "JP": ("{a}-{b}-{c} Shibuya", "{a}-{b}-{c} Ginza", "{a}-{b}-{c} Umeda"), "KR": ("{n} Gangnam-daero", "{n} Haeundae-ro"),
    "CN": ("{n} Nanjing Road",), "VN": ("{n} Phố Hàng Bạc", "{n} Lê Lợi"), "SG": ("{n} Orchard Road",), "TH": ("{n} Sukhumvit Soi {s}",),
    "IN": ("{n} MG Road", "{n}, 4th Cross, Indiranagar", "{n} Linking Road"), "AU": ("{n} George St", "{n} Collins Street"),
    "NZ": ("{n} Queen Street",), "BR": ("Av. Paulista, {n}", "Rua Oscar Freire, {n}"), "MX": ("Av. Reforma {n}", "Calle Madero {n}"),
    "CO": ("Carrera 7 #{s}-{n}", "Calle 10 #{s}-{n}"), "AR": ("Av. Corrientes {n}", "Calle Florida {n}"),
    "NG": ("{n} Awolowo Road",), "KE": ("{n} Kenyatta Avenue",), "ZA": ("{n} Long Street",), "EG": ("{n} Tahrir Street",),
    "AE": ("{n} Sheikh Zayed Road",), "MA": ("{n} Rue Yves Saint Laurent",), "GH": ("{n} Oxford Street",),
    "CL": ("Cerro Alegre {n}",), "PE": ("Calle Hatunrumiyoc {n}",),
}
_POSTCODES = {"US": ("{z5}",), "FR": ("{z5}",), "DE": ("{z5}",), "ES": ("{z5}",), "IT": ("{z5}",), "UK": ("SW1A 1AA", "NW1 6XE", "EC1V 9HX", "M1 4BT"),
              "CA": ("H2X 1Y4", "M5V 2T6"), "NL": ("1016 DV",), "JP": ("150-0002",), "BR": ("01310-100",), "AU": ("2000", "3000")}
LANDMARKS = ("the Eiffel Tower", "Central Park", "the Golden Gate Bridge", "Sagrada Família", "the Brandenburg Gate",
             "Big Ben", "the Colosseum", "the Louvre", "Times Square", "the Sydney Opera House", "Shibuya Crossing",
             "the Tower of London", "Plaza Mayor", "the Rijksmuseum", "Stanley Park", "the Space Needle",
             "Machu Picchu", "the Acropolis", "Christ the Redeemer", "Hagia Sophia", "the Burj Khalifa",
             "Table Mountain", "Fushimi Inari Shrine", "Gyeongbokgung Palace", "Marina Bay Sands", "Museo del Prado",
             "Praça do Comércio", "Charles Bridge", "Nyhavn", "the Hallgrímskirkja", "Jardin du Luxembourg",
             "Parque del Retiro", "the Gateway of India", "Bondi Beach", "Union Square", "Piazza San Marco",
             "Notre-Dame de Paris", "Schönbrunn Palace", "the Blue Mosque", "Wembley Stadium", "Camp Nou")
_BUSINESS_TYPES = ("Café", "Coffee", "Bakery", "Pizzeria", "Trattoria", "Bistro", "Brasserie", "Sushi", "Ramen",
                   "Taquería", "Tapas Bar", "Grill", "Kitchen", "Books", "Dental Clinic", "Pharmacy", "Gym", "Yoga Studio",
                   "Hair Salon", "Barbershop", "Bike Shop", "Hardware", "Florist", "Vet Clinic", "Laundromat", "Hotel",
                   "Hostel", "Cinema", "Records", "Wine Bar", "Brewery", "Market", "Garage", "Bank", "Library",
                   "Climbing Gym", "Dim Sum House", "Noodle Bar", "Patisserie", "Boulangerie", "Deli", "Car Wash")
# What people look for around them, singular and plural ("the nearest pharmacy", "pharmacies near me").
_NEARBY = (("pharmacy", "pharmacies"), ("gas station", "gas stations"), ("coffee shop", "coffee shops"),
           ("ATM", "ATMs"), ("supermarket", "supermarkets"), ("hospital", "hospitals"), ("parking", "parking spots"),
           ("bus stop", "bus stops"), ("train station", "train stations"), ("sushi place", "sushi places"),
           ("gym", "gyms"), ("bakery", "bakeries"), ("charging station", "EV chargers"), ("post office", "post offices"),
           ("vet", "vets"), ("playground", "playgrounds"), ("public toilet", "restrooms"), ("bookstore", "bookstores"),
           ("pizza place", "pizza places"), ("hardware store", "hardware stores"))


def nearby_query(rng: Random, nearest: bool) -> str:
    """A search around the user, as said: "nearest pharmacy" (`nearest`) or "coffee shops near me"."""
    one, many = rng.choice(_NEARBY)
    if nearest:
        return f"{rng.choice(('nearest', 'closest', 'nearest open'))} {one}"
    return f"{many} {rng.choice(('near me', 'nearby', 'around here', 'close to me', 'in the area'))}"


_BUSINESS_NAMES = ("Blue Bottle", "Golden Dragon", "Sakura", "La Piazza", "El Rincón", "Le Petit", "Smile", "Green Leaf",
                   "FitLife", "Lotus", "Red Fox", "Olive Tree", "Sunrise", "Maple", "Harbour", "Riverside", "Old Town",
                   "Mama Rosa's", "Chez Amélie", "Café Lumière", "Bäckerei Schmidt", "Kaffeehaus Müller", "Ōmori",
                   "Casa Lucía", "Da Enzo", "The Copper Kettle", "Little Saigon", "Taj", "Bombay", "Nordic", "Fjord",
                   "Atlas", "Pioneer", "Union", "Corner", "Jade Garden", "Bella Napoli", "Señor Taco", "Karma",
                   "Mercado", "Wildflower", "Ivy", "Cedar", "Saffron", "Tokyo", "Kimchi House", "Pho 24", "Brooklyn",
                   "Papa Joe's", "Hōjicha", "Nana's", "Zeitgeist", "Alfama", "Montmartre", "Sol y Sombra", "Nomad")
_CHAINS = ("Starbucks", "IKEA", "Walmart", "Costco", "McDonald's", "Apple Store", "Whole Foods", "Trader Joe's",
           "Decathlon", "Carrefour", "Lidl", "Aldi", "Tesco", "Boots", "Zara", "Uniqlo", "H&M", "MediaMarkt",
           "Walgreens", "CVS Pharmacy", "Home Depot", "Target", "Best Buy", "7-Eleven", "Pret A Manger", "Nando's")


def city(rng: Random) -> str:
    return rng.choice(CITIES)[0]


def address(rng: Random) -> str:
    name, cc = rng.choice(CITIES)
    street = rng.choice(_STREETS.get(cc, ("{n} Main Street",))).format(
        n=rng.randint(1, 250), s=rng.randint(1, 40), a=rng.randint(1, 5), b=rng.randint(1, 20), c=rng.randint(1, 30))
    if rng.random() < 0.35 and cc in _POSTCODES:
        code = rng.choice(_POSTCODES[cc]).format(z5=f"{rng.randint(10000, 99999)}")
        return f"{street}, {code} {name}" if cc in ("FR", "DE", "ES", "IT", "NL", "BR") else f"{street}, {name} {code}"
    return f"{street}, {name}" if rng.random() < 0.85 else street


def business(rng: Random) -> str:
    r = rng.random()
    if r < 0.15:
        return rng.choice(_CHAINS)
    if r < 0.3:
        return f"{rng.choice(FIRST_NAMES)}'s {rng.choice(_BUSINESS_TYPES)}"
    return f"{rng.choice(_BUSINESS_NAMES)} {rng.choice(_BUSINESS_TYPES)}"


def map_query(rng: Random) -> str:
    """What people search a map for: a business (maybe with its city), an address, a landmark, a city."""
    r = rng.random()
    if r < 0.3:
        b = business(rng)
        return rng.choice((b, f"{b}, {city(rng)}", f"{b} {city(rng)}", f"{b} near {rng.choice(LANDMARKS).removeprefix('the ')}"))
    if r < 0.6:
        return address(rng)
    if r < 0.8:
        return rng.choice(LANDMARKS).removeprefix("the ")
    if r < 0.9:
        return city(rng)
    return f"{rng.choice(('Terminal 2', 'Gate B', 'Platform 9', 'the north entrance', 'Parking Lot C'))}, {rng.choice(('JFK Airport', 'Heathrow', 'Gare du Nord', 'Hauptbahnhof', 'Schiphol', 'Narita Airport', 'Union Station'))}"


# ------------------------------------------------------------------------------------------ texts
_TOPICS = ("the quarterly report", "the budget", "the offsite", "our trip", "the contract", "the invoice", "the launch",
           "the kitchen renovation", "the wedding", "the school play", "the rent", "the car repair", "the new hire",
           "the design review", "the Lisbon trip", "the book club", "next week's demo", "the insurance claim",
           "the party", "the apartment viewing", "the dentist bill", "the marketing plan", "the grant application",
           "the football tournament", "the deadline", "the move", "the conference talk", "the survey results")
_SUBJECTS = ("Quarterly report", "Invoice #{n4}", "Meeting notes", "Re: {Topic}", "Dinner on {weekday}", "{Topic} update",
             "Question about {topic}", "Flight details", "Happy birthday!", "Updated contract", "Lunch tomorrow?",
             "Running late", "Outage", "Photos from the weekend", "Rent for {month}", "Order #{n5}", "Quick question",
             "Thank you", "Follow-up", "Your application", "Schedule change", "Reminder: {Topic}", "Booking confirmation",
             "Project {Code} kickoff", "Weekend plans", "Feedback on {topic}", "Draft for review", "Urgent: {Topic}",
             "Expense report {month}", "Welcome aboard", "Car pool on {weekday}", "Recipe you asked for",
             "Hello from {city}", "Missing package", "Offer letter", "Tickets for {weekday}", "{Topic}", "Notes from today",
             "Can we reschedule?", "Sick day", "New address", "Vacation request", "Bug in checkout", "Lost keys")
_BODIES = ("I'll be {mins} minutes late.", "Can we move our meeting to {weekday}?", "The VPN is down again.",
           "Please find the report attached.", "Thanks for your help yesterday!", "See you at {place} at {clock}.",
           "The invoice is due on {weekday}.", "Let me know if {weekday} works for you.", "I left my keys at your place.",
           "Happy birthday, have a great day!", "Could you send me the slides from {topic}?", "Dinner is at {clock}, don't be late.",
           "I won't make it today, I'm sick.", "The package arrived, thank you!", "Are we still on for {weekday}?",
           "Please call me when you get this.", "Here are my notes on {topic}.", "I've booked the table at {place}.",
           "The kids need to be picked up at {clock}.", "Can you review the draft before {weekday}?",
           "We're out of milk, can you grab some?", "Great job on {topic}!", "The meeting is cancelled.",
           "I'm stuck in traffic near {place}.", "Rent for {month} has been transferred.", "Looking forward to seeing you in {city}!",
           "Sorry for the delay, I'll reply properly tomorrow.", "The printer on floor {floor} is broken again.",
           "Please confirm the booking for {n2} people.", "I found a bug in the checkout page.", "Welcome to the team!",
           "Let's grab coffee next week.", "My flight lands at {clock}.", "Can you water the plants while I'm away?",
           "Don't forget to bring {thing}.", "The total comes to {money}.", "I'll send the rest on {weekday}.",
           "Thanks, that works for me.", "Could you resend the file? The link expired.", "We need {n2} more chairs for {topic}.")
# News told in a clause ("email ana that I'm running late"): the clause, as said, is the subject.
_STATEMENTS = ("I'm running late", "I'll be {mins} minutes late", "the meeting is cancelled", "the VPN is down again",
               "I'm stuck in traffic near {place}", "the package arrived", "I won't make it today", "dinner is at {clock}",
               "my flight lands at {clock}", "the invoice is due on {weekday}", "I left my keys at your place",
               "rent for {month} has been transferred", "the printer on floor {floor} is broken again",
               "I've booked the table at {place}", "the kids need picking up at {clock}", "I'm working from home today",
               "the report is ready", "we're out of milk", "the demo moved to {weekday}", "I'm sick today",
               "I got the job", "the car is ready", "I'll send the rest on {weekday}", "{topic} is postponed",
               "I'm on my way", "the train is delayed", "we need {n2} more chairs", "I found your {thing2}",
               "{first} says hi", "the contract is signed", "I can't make {weekday}", "the slides are done")
_THINGS = ("the charger", "your passport", "the tickets", "the contract", "a jacket", "the cake", "the projector",
           "your laptop", "the spare key", "sunscreen", "the board game", "snacks")
_TITLES = ("Dentist", "Dentist appointment", "Team standup", "Lunch with {first}", "{first}'s birthday party",
           "Call with {first} {last}", "Flight to {city}", "Yoga class", "Parent-teacher meeting", "Pick up {thing2}",
           "1:1 with {first}", "{Code} review", "Book club", "Car service", "Haircut", "Haircut at {biz}", "Gym",
           "Doctor's appointment", "Dinner at {biz}", "Coffee with {first}", "Piano lesson", "Soccer practice",
           "Pay rent", "Project deadline", "Job interview at {company}", "Vet appointment", "Date night",
           "Grocery run", "Oil change", "Board meeting", "Sprint planning", "Team retro", "Physio", "Swim lessons",
           "Visit {first}", "Concert in {city}", "Movie night", "Flight {airline}{n3}", "Wedding rehearsal",
           "Study group", "Spanish class", "Therapy session", "Farmers market", "Hackathon", "Volunteer shift",
           "Anniversary dinner", "Bake sale", "Tax appointment", "Passport renewal", "Apartment viewing at {addr}",
           "Meet {first} at {landmark}", "Quarterly planning", "Marathon training", "Client call with {company}",
           "Recital", "Open house", "Car pool", "Chess club", "Pottery class", "Beach day", "Checkup")
_CODES = ("Atlas", "Phoenix", "Orion", "Nimbus", "Falcon", "Q3", "Q4", "Mercury", "Aurora", "Helios", "Borealis", "Cobalt")
_AIRLINES = ("LH", "BA", "AF", "UA", "DL", "KL", "IB", "QF", "NH", "EK", "TK", "LX")


def _fill(rng: Random, pattern: str) -> str:
    p = person(rng)
    fields = {
        "n2": rng.randint(2, 12), "n3": rng.randint(100, 999), "n4": rng.randint(1000, 9999), "n5": rng.randint(10000, 99999),
        "weekday": rng.choice(("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")),
        "month": rng.choice(("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")),
        "topic": rng.choice(_TOPICS), "city": city(rng), "place": business(rng), "biz": business(rng),
        "clock": f"{rng.randint(1, 11)}:{rng.choice(('00', '15', '30', '45'))}", "mins": rng.choice((5, 10, 15, 20, 30, 45)),
        "floor": rng.randint(1, 12), "thing": rng.choice(_THINGS), "thing2": rng.choice(_THINGS).removeprefix("the ").removeprefix("your "),
        "money": rng.choice(("$", "€", "£", "")) + f"{rng.randint(12, 900)}.{rng.randint(0, 99):02d}",
        "first": p.first, "last": p.last, "Code": rng.choice(_CODES), "company": rng.choice(COMPANY_WORDS).capitalize(),
        "airline": rng.choice(_AIRLINES), "landmark": rng.choice(LANDMARKS).removeprefix("the "), "addr": address(rng).split(",")[0],
    }
    fields["Topic"] = fields["topic"][0].upper() + fields["topic"][1:] if not fields["topic"].startswith("the ") else fields["topic"][4].upper() + fields["topic"][5:]
    return pattern.format(**fields)


# Context people give before asking, which asks for nothing ("I'm meeting Ana at the Louvre tomorrow, turn on
# the flashlight"): places, names and times a caller must not turn into calls of their own.
_ASIDES = ("I'm meeting {first} at {landmark} tomorrow", "{first} is coming over on {weekday}",
           "we're having dinner at {biz} tonight", "my flight to {city} leaves at {clock}",
           "I just got back from {landmark}", "the meeting with {first} {last} went well",
           "{first} emailed me this morning", "I'm at {biz} right now", "my sister lives in {city}",
           "I have a busy {weekday}", "the party at {first}'s place was fun", "I'm heading to {city} next week")


def aside(rng: Random) -> str:
    return _fill(rng, rng.choice(_ASIDES))


def subject(rng: Random) -> str:
    return _fill(rng, _as_typed(rng, rng.choice(_SUBJECTS)))


def statement(rng: Random) -> str:
    return _fill(rng, rng.choice(_STATEMENTS))


def body(rng: Random) -> str:
    text = _fill(rng, rng.choice(_BODIES))
    if rng.random() < 0.25:
        text = f"{text} {_fill(rng, rng.choice(_BODIES))}"
    if rng.random() < 0.15:
        text = text.rstrip(".!")
    return text


def _as_typed(rng: Random, pattern: str, share: float = 0.4) -> str:
    """A title pattern as people type it: often with a lower-case first letter ("dentist appointment"). The
    gold value is what they typed, so a caller trained only on "Dentist appointment" would re-capitalise or
    balk. Patterns that open with a name ("{first}'s birthday") or an acronym ("LH123") keep their case."""
    first = pattern.split(" ", 1)[0]
    if rng.random() >= share or not first[:1].isupper() or first[1:2].isupper() or any(c.isdigit() for c in first):
        return pattern
    return pattern[0].lower() + pattern[1:]


def event_title(rng: Random) -> str:
    return _fill(rng, _as_typed(rng, rng.choice(_TITLES)))


# ------------------------------------------------------------------------------------------ GUI goals
# Things people ask a phone to do that no Mobile Actions tool covers: a GUI navigator does them on the
# screen. Compositional (a verb for the thing, the thing), so goals vary beyond any fixed list.
_SETTINGS = ("Bluetooth", "airplane mode", "Do Not Disturb", "dark mode", "the hotspot", "location", "auto-rotate",
             "battery saver", "NFC", "mobile data", "Wi-Fi", "wifi", "the wifi")
_SWITCH_ON = ("turn on", "switch on", "enable", "activate", "put on")
_SWITCH_OFF = ("turn off", "switch off", "disable", "deactivate")
_APPS = ("Chrome", "the browser", "the calendar app", "my contacts", "the notes app", "Gmail", "the settings",
         "the camera", "the clock", "the calculator", "Maps", "the Play Store", "the gallery", "the files app")
_SITES = ("example.com", "wikipedia.org", "the BBC website", "bbc.co.uk", "news.ycombinator.com", "my bank's website")
_SEARCHES = ("pizza near me", "cheap flights to Lisbon", "the weather in Oslo", "how to tie a tie", "vegan recipes",
             "train times to Leeds")
_NOTES = ("buy milk and eggs", "call the plumber", "pick up the dry cleaning", "gate code 4512", "book the car service",
          "ideas for Mia's birthday")


def switch_goal(rng: Random, on: bool) -> tuple[str, str]:
    """(verb, setting) for switching a setting no tool covers on or off: ("turn on", "Bluetooth")."""
    return rng.choice(_SWITCH_ON if on else _SWITCH_OFF), rng.choice(_SETTINGS)


# The phone's own apps beyond the tools: the Clock, Messages, levels and edits of what the phone keeps. Without
# them a router sends "wake me up at 7 on weekdays, label it gym" to the calendar tool (an event named "gym").
_ALARM_ASKS = ("set an alarm for {t}", "set an alarm at {t}", "wake me up at {t}", "alarm for {t}", "add an alarm at {t}",
               "create an alarm for {t}", "I need an alarm at {t}", "get me up at {t}")
_ALARM_DAYS = ("", "", " on weekdays", " every weekday", " every day", " on weekends", " on Mondays and Thursdays",
               " every Saturday", " mon wed and fri", " Monday to Friday", " tomorrow")
_ALARM_LABELS = ("", "", "", " called gym", " and label it meds", ", name it work", " labelled school run")
_ALARM_EDITS = ("turn off my {t} alarm", "switch off the {t} alarm", "delete the {t} alarm", "remove my {t} alarm",
                "get rid of the alarm at {t}", "disable my {t} alarm but keep it")
_TIMERS = ("set a timer for {m} minutes", "start a {m} minute timer", "timer for {m} min", "{m} minute timer please",
           "set a timer for an hour and {m} minutes", "countdown {m} seconds", "start a timer for half an hour",
           "set a {m} min timer for the pasta", "start the stopwatch", "stop the stopwatch", "kick off the stopwatch")
_TEXTS = ("text {who} saying {said}", "text {who} that {said}", "send {who} a message saying {said}",
          "message {who}: {said}", "send a text to {who} that says {said}", "sms {who} {said}", "tell {who} {said} by text",
          "reply to {who}'s text with {said}", "answer {who}'s message saying {said}")
_LEVELS = ("set the brightness to {pct}", "turn the media volume to max", "put the ring volume at half",
           "mute the media volume", "set the ring volume to {pct}", "brightness {pct} please", "max out the brightness",
           "turn the screen brightness down to the lowest", "media volume to {pct}")
_EDITS = ("delete the {title} note", "delete all my notes", "clear out my notes", "rename the {title} note to {title2}",
          "add {thing} to my {title} note", "change {first}'s number to {phone}", "update {first}'s contact with "
          "the number {phone}", "{first} has a new number, {phone}, update it", "change {first}'s email to {email}",
          "{first} got a new email, it's {email}, fix her contact", "delete {first} {last} from my contacts",
          "remove the contact {first} {last}",
          "add the location {place} to my {title} event", "delete my {title} event")


def _time_said(rng: Random, short: bool = False) -> str:
    h, m = rng.randint(1, 12), rng.choice(("00", "15", "30", "45", "10", "50"))
    return rng.choice((f"{h}:{m}", f"{h}:{m} am", f"{h}:{m}pm", f"{h}am", f"{h} pm", f"{rng.randint(13, 23)}:{m}",
                       *(() if short else (f"{h}:{m} in the morning",))))


def phone_app_goal(rng: Random) -> str:
    """A goal in the phone's own apps (Clock, Messages, levels, edits), in the user's words."""
    kind = rng.randrange(6)
    p = person(rng)
    if kind == 0:
        return (rng.choice(_ALARM_ASKS) + rng.choice(_ALARM_DAYS) + rng.choice(_ALARM_LABELS)).format(t=_time_said(rng))
    if kind == 1:
        return rng.choice(_ALARM_EDITS).format(t=_time_said(rng, short=True))
    if kind == 2:
        return rng.choice(_TIMERS).format(m=rng.choice((2, 5, 10, 12, 15, 20, 25, 30, 45, 90)))
    if kind == 3:
        who = rng.choice((p.first, p.first, p.full, rng.choice(NICKNAMES), phone(rng)))
        return rng.choice(_TEXTS).format(who=who, said=statement(rng))
    if kind == 4:
        return rng.choice(_LEVELS).format(pct=rng.choice(("20%", "50%", "70", "80 percent", "30", "100%", "half")))
    title, title2 = (_fill(rng, t).lower() for t in rng.sample(("shopping", "groceries", "ideas", "packing", "wifi",
                                                               "{first}", "work", "recipes", "books"), 2))
    return rng.choice(_EDITS).format(title=title, title2=title2, thing=rng.choice(_THINGS).removeprefix("the "),
                                     first=p.first, last=p.last, phone=phone(rng), place=business(rng),
                                     email=email_for(rng, p))


def gui_goal(rng: Random) -> str:
    """One thing to do on the screen, as a verb phrase in the user's words (the phone's own apps: 3 in 11)."""
    kind = rng.randrange(11)
    if kind >= 8:
        return phone_app_goal(rng)
    if kind <= 1:
        thing = rng.choice(_SETTINGS)
        verb = rng.choice(_SWITCH_ON if kind == 0 else _SWITCH_OFF)
        if " " in verb and rng.random() < 0.4:  # "turn Bluetooth on"
            head, particle = verb.split()
            return f"{head} {thing} {particle}"
        return f"{verb} {thing}"
    if kind == 2:
        return f"{rng.choice(('open', 'launch', 'start', 'go to', 'bring up'))} {rng.choice(_APPS)}"
    if kind == 3:
        return rng.choice((f"go to {rng.choice(_SITES)}", f"open {rng.choice(_SITES)} in Chrome",
                           f"search for {rng.choice(_SEARCHES)} in Chrome", f"look up {rng.choice(_SEARCHES)} in the browser"))
    if kind == 4:
        return rng.choice((f"write a note saying {rng.choice(_NOTES)}", f"make a note that says {rng.choice(_NOTES)}",
                           f"jot down {rng.choice(_NOTES)} in my notes", f"add a note: {rng.choice(_NOTES)}"))
    if kind == 5:
        return rng.choice(("clear all recent apps", "close all my apps", "show the recent apps", "open the app switcher",
                           "go back to the home screen", "go home", "go back", "open the notification shade"))
    if kind == 6:
        return rng.choice(("turn the brightness up", "turn the brightness down", "make the screen brighter",
                           "dim the screen", "turn the volume up", "turn the volume down", "mute the phone",
                           "set the volume to max"))
    return rng.choice(("copy the address on the screen", "copy this text", "paste what I copied into a note",
                       "take a screenshot", "change the wallpaper", "open the battery settings",
                       "check which apps use the most battery", "open the Wi-Fi list and connect to Home"))
