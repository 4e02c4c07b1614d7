#!/bin/bash
echo one > /app/out.txt
