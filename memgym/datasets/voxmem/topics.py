"""The 20 topic families that VoxMem's evidence and haystack sessions are written about.

A family has several *subjects* (the thing a session is about, e.g. "the kitchen renovation"),
one *slot* (the fact a user states about a subject, e.g. its budget) and an ordered list of
*values* for that slot (ascending, so "which was higher" questions have an answer). Sessions on
different subjects of one family are topically close, which is what makes them good haystacks.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class TopicFamily:
    """One family of subjects sharing a slot.

    Attributes:
        name: family id.
        subjects: noun phrases usable after "about" ("the kitchen renovation").
        slot: the stated fact's name ("budget").
        values: ascending slot values, spoken as words.
        higher: adjective for comparing values ("higher", "later").
    """

    name: str
    subjects: tuple[str, ...]
    slot: str
    values: tuple[str, ...]
    higher: str = "higher"


TOPIC_FAMILIES: tuple[TopicFamily, ...] = (
    TopicFamily(
        "home_repair",
        ("the lamp replacement", "the leaking faucet", "the broken fence", "the squeaky door"),
        "repair day",
        ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"),
        "later in the week",
    ),
    TopicFamily(
        "renovation",
        ("the kitchen renovation", "the bathroom remodel", "the attic conversion", "the new deck"),
        "budget",
        (
            "two thousand dollars",
            "five thousand dollars",
            "eight thousand dollars",
            "twelve thousand dollars",
            "twenty thousand dollars",
        ),
    ),
    TopicFamily(
        "travel",
        ("the trip to Lisbon", "the visit to Kyoto", "the weekend in Denver", "the tour of Norway"),
        "number of nights",
        ("two nights", "three nights", "four nights", "six nights", "nine nights"),
    ),
    TopicFamily(
        "fitness",
        ("the morning runs", "the swimming routine", "the cycling plan", "the yoga classes"),
        "weekly sessions",
        ("one session", "two sessions", "three sessions", "four sessions", "five sessions"),
    ),
    TopicFamily(
        "cooking",
        ("the lasagna recipe", "the curry for the party", "the birthday cake", "the bread experiment"),
        "oven time",
        ("twenty minutes", "thirty minutes", "forty five minutes", "an hour", "ninety minutes"),
        "longer",
    ),
    TopicFamily(
        "gardening",
        ("the tomato plants", "the rose bushes", "the herb boxes", "the new lawn"),
        "watering interval",
        ("every day", "every two days", "every three days", "twice a week", "once a week"),
        "less frequent",
    ),
    TopicFamily(
        "finance",
        ("the car loan", "the savings goal", "the holiday fund", "the emergency account"),
        "monthly amount",
        (
            "fifty dollars",
            "one hundred dollars",
            "two hundred dollars",
            "three hundred dollars",
            "five hundred dollars",
        ),
    ),
    TopicFamily(
        "pets",
        ("the puppy training", "the cat's diet", "the parrot's cage", "the fish tank"),
        "daily minutes",
        ("ten minutes", "fifteen minutes", "twenty minutes", "thirty minutes", "forty minutes"),
    ),
    TopicFamily(
        "events",
        ("the wedding reception", "the retirement party", "the school reunion", "the book club dinner"),
        "guest count",
        ("twelve guests", "twenty guests", "thirty guests", "fifty guests", "eighty guests"),
    ),
    TopicFamily(
        "work",
        ("the quarterly report", "the client presentation", "the hiring plan", "the office move"),
        "deadline",
        ("the third", "the tenth", "the fifteenth", "the twenty second", "the twenty eighth"),
        "later",
    ),
    TopicFamily(
        "study",
        ("the Spanish course", "the piano lessons", "the statistics class", "the coding bootcamp"),
        "hours per week",
        ("two hours", "four hours", "five hours", "seven hours", "ten hours"),
    ),
    TopicFamily(
        "health",
        ("the dentist visit", "the eye exam", "the physio sessions", "the annual checkup"),
        "appointment time",
        ("eight in the morning", "ten in the morning", "noon", "three in the afternoon", "six in the evening"),
        "later",
    ),
    TopicFamily(
        "shopping",
        ("the new laptop", "the winter coat", "the sofa", "the running shoes"),
        "price limit",
        ("sixty dollars", "ninety dollars", "two hundred dollars", "four hundred dollars", "nine hundred dollars"),
    ),
    TopicFamily(
        "commute",
        ("the subway commute", "the school run", "the carpool", "the bus to the gym"),
        "departure time",
        ("six thirty", "seven fifteen", "seven forty five", "eight twenty", "nine o'clock"),
        "later",
    ),
    TopicFamily(
        "family",
        ("the visit from my parents", "my niece's birthday", "the family barbecue", "the cousins' sleepover"),
        "number of people",
        ("three people", "five people", "seven people", "ten people", "fourteen people"),
    ),
    TopicFamily(
        "car",
        ("the oil change", "the tire rotation", "the brake check", "the car wash plan"),
        "mileage",
        (
            "three thousand miles",
            "five thousand miles",
            "seven thousand miles",
            "ten thousand miles",
            "fifteen thousand miles",
        ),
    ),
    TopicFamily(
        "reading",
        ("the mystery novel", "the history book", "the poetry collection", "the biography"),
        "pages per day",
        ("ten pages", "twenty pages", "thirty pages", "fifty pages", "eighty pages"),
    ),
    TopicFamily(
        "music",
        ("the guitar practice", "the choir rehearsal", "the drum lessons", "the band gig"),
        "practice length",
        ("fifteen minutes", "half an hour", "forty minutes", "an hour", "two hours"),
        "longer",
    ),
    TopicFamily(
        "volunteering",
        ("the food bank shifts", "the park cleanup", "the library tutoring", "the animal shelter"),
        "hours per month",
        ("three hours", "six hours", "eight hours", "twelve hours", "sixteen hours"),
    ),
    TopicFamily(
        "moving",
        ("the apartment search", "the storage unit", "the moving truck", "the new lease"),
        "rent limit",
        (
            "nine hundred dollars",
            "twelve hundred dollars",
            "fifteen hundred dollars",
            "eighteen hundred dollars",
            "two thousand dollars",
        ),
    ),
)
"""The 20 families; ``FAMILY_BY_NAME`` indexes them."""

FAMILY_BY_NAME: dict[str, TopicFamily] = {f.name: f for f in TOPIC_FAMILIES}
