#!/bin/bash
echo solved > /app/out.txt
