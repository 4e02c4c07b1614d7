#!/bin/bash
source $TEST_DIR/setup-node-jest.sh
