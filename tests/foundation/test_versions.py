"""mpsready.versions: the one release parser every stage uses."""

import pytest

from mpsready import versions


@pytest.mark.parametrize(("text", "expected"), [
    ("2.13.0+cpu", (2, 13, 0)),
    ("2.5.0a0+git1234", (2, 5, 0)),
    ("2.6.0.dev20241001", (2, 6, 0)),
    ("2.6.0rc1", (2, 6, 0)),
    ("14.4", (14, 4)),
    (" 15 ", (15,)),
])
def test_release(text, expected):
    assert versions.release(text) == expected


@pytest.mark.parametrize("text", ["", "latest", ".5", "+cpu"])
def test_release_rejects(text):
    with pytest.raises(ValueError, match="not a version"):
        versions.release(text)


def test_minor_and_same_minor():
    assert versions.minor("2.13.1") == (2, 13)
    assert versions.same_minor("2.5.1", "2.5.0+cpu") is True
    assert versions.same_minor("2.5.1", "2.6.0") is False


@pytest.mark.parametrize(("a", "b", "lt"), [
    ("13.5", "14.0", True), ("14", "14.0.1", True), ("14.0", "14", False), ("15.5", "14.4", False),
])
def test_macos_lt(a, b, lt):
    assert versions.macos_lt(a, b) is lt
