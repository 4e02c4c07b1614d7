#!/bin/bash
cd /testbed
sed -i 's/return a - b/return a + b/' calc.py
