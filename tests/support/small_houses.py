"""`memgym generate dialogmem` overrides for small, quick houses (3-4 rooms, 2-3 goals, 32x24 camera)."""

SMALL_HOUSES = (
    "first_house_seed=5",
    "house.min_rooms=3",
    "house.max_rooms=4",
    "traversal.min_goals=2",
    "traversal.max_goals=3",
    "camera.width=32",
    "camera.height=24",
)
