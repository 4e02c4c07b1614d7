if grep -q 'answer = 42' /app/config.ini && grep -q heredoc /app/built.txt; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
