#!/bin/bash
grep -q "Hello, world!" /app/hello.txt
