#!/bin/bash
grep -qx "Hello, world!" /app/hello.txt && echo "PASSED test_hello"
