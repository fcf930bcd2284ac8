"""
# A page whose second example fails
"""


def fine() -> str:
    return "fine"


def broken() -> float:
    return 1 / 0


#| fine()
#| broken()
