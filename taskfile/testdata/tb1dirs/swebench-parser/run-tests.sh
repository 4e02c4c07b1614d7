#!/bin/bash
echo "SWEBench results starts here"
echo FAILED
echo "SWEBench results ends here"
