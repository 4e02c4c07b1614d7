def test_sorted():
    assert open("/app/sorted.txt").read() == "a\nb\n"
