def test_hello():
    assert open("/app/hello.txt").read().strip() == "Hello, world!"
