sed -i 's/answer = 41/answer = 42/' /app/config.ini
