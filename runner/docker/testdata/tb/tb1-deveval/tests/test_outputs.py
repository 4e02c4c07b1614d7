from pathlib import Path


def test_greeting_exists():
    assert Path("/app/greeting.txt").exists()


def test_greeting_says_hello():
    assert Path("/app/greeting.txt").read_text().strip() == "hello"
