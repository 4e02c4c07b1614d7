#!/bin/bash
echo "waiting for the sweep to be cancelled"
sleep 120
