#!/bin/bash
echo hello > /app/greeting.txt
