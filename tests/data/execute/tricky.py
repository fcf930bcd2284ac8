'''
# Docstrings that are hard to write back

Each function's docstring must come back the same in the notebook.
'''


def quotes():
    '''Holds """ three quotes, and ends with a quote: "done"'''


def backslash():
    """Ends with a backslash: \\"""


def escapes():
    """A tab\there, a LaTeX $\\sqrt{d_k}$ and an é."""


class Nested:
    """A class whose method has only a docstring."""

    # Prose inside the class, before the method.
    def method(self):
        """Nothing but this docstring.

        Over two paragraphs.
        """

    @staticmethod
    def decorated(
        x,
    ):
        """After a decorator and a signature over three lines."""
        return x
